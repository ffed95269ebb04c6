"""pyarrow's and pandas' CSV readers on the edge list `benches/io.rs` writes, for the side-by-side
figures of the book's performance chapter.

    python benches/peers/io_csv.py target/io-bench/edges_10000000.csv [--threads 2] [--repeat 5]

Prints the best of `--repeat` runs of each reader, in seconds: pyarrow.csv.read_csv with
`--threads` CPU threads (pyarrow.set_cpu_count; `use_threads=True`) and with one thread,
and pandas.read_csv (its C parser; one thread), each into two int64 columns, as ours reads
`src,dst` into two i64 vectors. With `--parquet`, it first writes the table as Parquet beside
the file (`.parquet`: int64 columns, snappy, row groups of 2**20 rows), which `benches/io.rs`
then reads with the feature `parquet`, and times pyarrow.parquet.read_table on it.
"""
import argparse
import time

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq


def best(f, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - start)
        del out
    return min(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--parquet", action="store_true")
    a = p.parse_args()
    types = {"src": pa.int64(), "dst": pa.int64()}
    convert = pacsv.ConvertOptions(column_types=types)

    def arrow(threads):
        pa.set_cpu_count(threads)
        opts = pacsv.ReadOptions(use_threads=threads > 1)
        return lambda: pacsv.read_csv(a.file, read_options=opts, convert_options=convert)

    print(f"pyarrow {pa.__version__}, pandas {pd.__version__}")
    print(f"pyarrow.csv.read_csv, {a.threads} threads: {best(arrow(a.threads), a.repeat):.3f} s")
    print(f"pyarrow.csv.read_csv, 1 thread: {best(arrow(1), a.repeat):.3f} s")
    pandas = lambda: pd.read_csv(a.file, dtype={"src": "int64", "dst": "int64"}, engine="c")
    print(f"pandas.read_csv (c engine): {best(pandas, a.repeat):.3f} s")
    if a.parquet:
        target = a.file.rsplit(".", 1)[0] + ".parquet"
        table = arrow(a.threads)()
        pq.write_table(table, target, compression="snappy", row_group_size=1 << 20)
        for threads in [a.threads, 1]:
            pa.set_cpu_count(threads)
            read = lambda: pq.read_table(target, use_threads=threads > 1)
            print(f"pyarrow.parquet.read_table, {threads} thread(s): {best(read, a.repeat):.3f} s")


if __name__ == "__main__":
    main()
