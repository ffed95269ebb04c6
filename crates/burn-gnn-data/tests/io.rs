//! The table readers: hand-worked tables, every bad-input case as a typed error naming file,
//! line and column, random tables written and read back, and mutated bytes that must give an
//! error or a graph, never a panic.

use burn_gnn_data::DataError;
use burn_gnn_data::io::{
    Column, EDGE_WEIGHT, EdgeTable, Features, IdKind, LABELS, LabelKind, NodeId, NodeIndex,
    NodeTable, Table, TableGraph,
};
use burn_gnn_graph::FeatureValues;
use proptest::prelude::*;

fn table(text: &str) -> Table {
    Table::from_bytes("t.csv", text)
}

fn f32s(v: &FeatureValues) -> &[f32] {
    match v {
        FeatureValues::F32(v) => v,
        other => panic!("expected f32 values, got {other:?}"),
    }
}

/// The `(file, line, column)` of a table error, and its message.
fn at(e: DataError) -> (String, u64, Option<String>, String) {
    let message = e.to_string();
    match e {
        DataError::Table {
            file, line, column, ..
        } => (file, line, column, message),
        other => panic!("expected a table error, got {other:?}"),
    }
}

#[test]
fn integer_ids_without_a_node_table_are_numbered_in_ascending_order() {
    // Ids 10, 30, 20, 5 -> rows by value: 5 -> 0, 10 -> 1, 20 -> 2, 30 -> 3.
    let g = EdgeTable::new(table("a,b\n10,30\n30,20\n5,10\n20,20\n"))
        .read()
        .unwrap();
    assert_eq!(g.data.senders, [1, 3, 0, 2]);
    assert_eq!(g.data.receivers, [3, 2, 1, 2]);
    assert_eq!(
        (
            g.data.num_nodes,
            g.data.n_node.clone(),
            g.data.n_edge.clone()
        ),
        (4, vec![4], vec![4])
    );
    let ids: Vec<NodeId> = g.index.iter().collect();
    assert_eq!(ids, [5, 10, 20, 30].map(NodeId::Integer));
    assert_eq!(g.index.row("20"), Some(2));
    assert_eq!(g.index.row(" 30 "), Some(3));
    assert_eq!(g.index.row("7"), None);
    assert!(g.data.nodes.main.is_none() && g.data.edges.main.is_none());
    // A byte-order mark before the header (as spreadsheets write) is not part of the first name.
    let g = EdgeTable::new(table("\u{feff}a,b\n1,2\n"))
        .source("a")
        .target("b")
        .read()
        .unwrap();
    assert_eq!(
        (g.data.senders.clone(), g.data.receivers.clone()),
        (vec![0], vec![1])
    );
}

#[test]
fn text_ids_positional_columns_tabs_comments_and_no_header() {
    let text = "# exported 2026-12-06\nx\tbob\talice\t1.5\n# a comment between records\ny\tcarol\tbob\t-2\n";
    let g = EdgeTable::new(
        Table::from_bytes("e.tsv", text)
            .delimiter(b'\t')
            .header(false)
            .comment(Some(b'#')),
    )
    .source(1)
    .target(2)
    .weight(3)
    .ids(IdKind::Text)
    .read()
    .unwrap();
    // alice 0, bob 1, carol 2 (byte order).
    assert_eq!(
        (g.data.senders.clone(), g.data.receivers.clone()),
        (vec![1, 2], vec![0, 1])
    );
    assert_eq!(f32s(&g.data.edges.named[EDGE_WEIGHT].values), [1.5, -2.0]);
    assert_eq!(g.data.edges.named[EDGE_WEIGHT].shape, [2]);
    assert_eq!(g.index.id(2), Some(NodeId::Text("carol")));
    assert_eq!(g.index.id(3), None);
}

#[test]
fn index_ids_are_rows_and_a_node_table_is_put_in_row_order() {
    // The node table lists rows 2, 0, 1: its features land at their ids.
    let nodes = NodeTable::new(table("id,f,g,label\n2,20,21,1\n0,0,1,\n1,10,11,0\n"))
        .features(Features::Rest)
        .label("label", LabelKind::Integer);
    let g = EdgeTable::new(table("s,t\n0,2\n2,1\n"))
        .ids(IdKind::Index)
        .nodes(nodes)
        .read()
        .unwrap();
    assert_eq!(
        (g.data.senders.clone(), g.data.receivers.clone()),
        (vec![0, 2], vec![2, 1])
    );
    let x = g.data.nodes.main.as_ref().unwrap();
    assert_eq!(x.shape, [3, 2]);
    assert_eq!(f32s(&x.values), [0.0, 1.0, 10.0, 11.0, 20.0, 21.0]);
    assert_eq!(g.labels(), Some(&[-1, 0, 1][..]));
    assert_eq!(g.num_classes(), Some(2));
    assert_eq!(g.index, NodeIndex::rows(3));
    // Without a node table: max id + 1 nodes, isolated ones included.
    let g = EdgeTable::new(table("s,t\n0,4\n"))
        .ids(IdKind::Index)
        .read()
        .unwrap();
    assert_eq!(g.data.num_nodes, 5);
}

#[test]
fn vector_features_and_text_labels() {
    let nodes = table("id,emb,cls\n7,\"[0.5, 1, 2]\",cat\n3,\"[-1,0,1e-3]\",dog\n5,[],\n");
    let err = EdgeTable::new(table("s,t\n7,3\n"))
        .nodes(
            NodeTable::new(nodes.clone())
                .features(Features::vector("emb", ','))
                .label("cls", LabelKind::Text),
        )
        .read()
        .unwrap_err();
    let (_, line, column, message) = at(err);
    assert_eq!((line, column.as_deref()), (4, Some("emb")), "{message}");
    assert!(
        message.contains("0 values where the first row holds 3"),
        "{message}"
    );

    let nodes = table("id,emb,cls\n7,0.5 1  2,cat\n3,-1 0 1e-3,dog\n5,4 5 6,\n");
    let g = EdgeTable::new(table("s,t\n7,3\n5,7\n"))
        .nodes(
            NodeTable::new(nodes)
                .features(Features::vector("emb", ' '))
                .label("cls", LabelKind::Text),
        )
        .read()
        .unwrap();
    // Rows follow the node table: 7 -> 0, 3 -> 1, 5 -> 2.
    assert_eq!(
        (g.data.senders.clone(), g.data.receivers.clone()),
        (vec![0, 2], vec![1, 0])
    );
    let x = g.data.nodes.main.as_ref().unwrap();
    assert_eq!(x.shape, [3, 3]);
    assert_eq!(
        f32s(&x.values),
        [0.5, 1.0, 2.0, -1.0, 0.0, 1e-3, 4.0, 5.0, 6.0]
    );
    assert_eq!(g.labels(), Some(&[0, 1, -1][..]));
    assert_eq!(g.classes, Some(vec!["cat".to_string(), "dog".to_string()]));
    assert_eq!(g.num_classes(), Some(2));
}

#[test]
fn edge_features_by_name_and_the_graph_on_a_device() {
    let g = EdgeTable::new(table("u,v,a,b,w\n1,2,0.1,0.2,3\n2,1,0.3,0.4,4\n"))
        .source("u")
        .target("v")
        .features(Features::columns(["b", "a"]))
        .read()
        .unwrap();
    let e = g.data.edges.main.as_ref().unwrap();
    assert_eq!(
        (e.shape.clone(), f32s(&e.values).to_vec()),
        (vec![2, 2], vec![0.2, 0.1, 0.4, 0.3])
    );
    let device = burn::tensor::Device::flex();
    let graph = g.graph(&device).unwrap();
    assert_eq!((graph.sum_n_node(), graph.sum_n_edge()), (2, 2));
    let senders: Vec<i64> = graph.senders().to_data().iter::<i64>().collect();
    assert_eq!(senders, [0, 1]);
}

#[test]
fn gzip_tables_read_as_their_text() {
    use std::io::Write;
    let text = "s,t,w\n3,1,0.5\n1,2,1.5\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    let read = |t: Table| EdgeTable::new(t).weight("w").read();
    let got = read(Table::from_bytes("e.csv.gz", bytes.clone())).unwrap();
    assert_eq!(got, read(table(text)).unwrap());
    assert_eq!(got.data.senders, [2, 0]);
    // A corrupted stream is an error naming the file.
    let mut bad = bytes;
    let middle = bad.len() / 2;
    bad[middle] ^= 0xff;
    let e = read(Table::from_bytes("e.csv.gz", bad)).unwrap_err();
    let (file, _, _, message) = at(e);
    assert_eq!(file, "e.csv.gz", "{message}");
}

#[test]
fn empty_tables() {
    let g = EdgeTable::new(table("s,t\n")).read().unwrap();
    assert_eq!((g.data.num_nodes, g.data.senders.len()), (0, 0));
    let g = EdgeTable::new(table(""))
        .format(|t| t.header(false))
        .read()
        .unwrap();
    assert_eq!((g.data.num_nodes, g.data.senders.len()), (0, 0));
    // A node table without edges: isolated nodes.
    let g = EdgeTable::new(table("s,t\n"))
        .nodes(NodeTable::new(table("id\n4\n9\n")))
        .read()
        .unwrap();
    assert_eq!((g.data.num_nodes, g.index.row("9")), (2, Some(1)));
}

#[test]
fn numeric_matrices_are_typed_as_pandas_types_them() {
    // All integers: i64.
    let m = table("1,2\n-3,4\n").header(false).read_matrix().unwrap();
    assert_eq!(
        (m.shape.clone(), m.values),
        (vec![2, 2], FeatureValues::I64(vec![1, 2, -3, 4]))
    );
    // One float turns the table to f32, the integers before it included; an empty field and
    // `nan` are NaN; a header line is not data.
    let m = table("a,b\n1,2\n3,0.5\n,nan\n").read_matrix().unwrap();
    assert_eq!(m.shape, [3, 2]);
    let v = f32s(&m.values);
    assert_eq!(v[..4], [1.0, 2.0, 3.0, 0.5]);
    assert!(v[4].is_nan() && v[5].is_nan());
    // Not a number: file, line and column; an empty table is [0, 0].
    let (file, line, column, _) = at(table("1,2\n3,x\n").header(false).read_matrix().unwrap_err());
    assert_eq!(
        (file.as_str(), line, column.as_deref()),
        ("t.csv", 2, Some("#1"))
    );
    let m = table("").header(false).read_matrix().unwrap();
    assert_eq!(m.shape, [0, 0]);
}

#[test]
fn bad_input_names_file_line_and_column() {
    let cases: Vec<(EdgeTable, u64, Option<&str>, &str)> = vec![
        // A record of another length.
        (
            EdgeTable::new(table("s,t\n1,2\n3,4,5\n")),
            3,
            None,
            "3 fields where",
        ),
        // A missing column.
        (
            EdgeTable::new(table("s,t\n1,2\n")).source("src"),
            1,
            Some("src"),
            "header has: s, t",
        ),
        (
            EdgeTable::new(table("1,2\n"))
                .format(|t| t.header(false))
                .target(2),
            1,
            Some("#2"),
            "2 columns",
        ),
        (
            EdgeTable::new(table("1,2\n"))
                .format(|t| t.header(false))
                .source("s"),
            1,
            Some("s"),
            "needs a header",
        ),
        // Not an integer id.
        (
            EdgeTable::new(table("s,t\n1,2\n3,x4\n")),
            3,
            Some("t"),
            "`x4` is not an integer node id",
        ),
        (
            EdgeTable::new(table("s,t\n1,99999999999999999999\n")),
            2,
            Some("t"),
            "not an integer",
        ),
        (
            EdgeTable::new(table("s,t\n-1,2\n")).ids(IdKind::Index),
            2,
            Some("s"),
            "negative",
        ),
        // A non-numeric weight or feature, an empty feature.
        (
            EdgeTable::new(table("s,t,w\n1,2,heavy\n")).weight("w"),
            2,
            Some("w"),
            "`heavy` is not a number",
        ),
        (
            EdgeTable::new(table("s,t,w\n1,2,\n")).features(Features::Rest),
            2,
            Some("w"),
            "`` is not a number",
        ),
        // An endpoint absent from the node table.
        (
            EdgeTable::new(table("s,t\n1,2\n2,3\n"))
                .nodes(NodeTable::new(Table::from_bytes("n.csv", "id\n1\n2\n"))),
            3,
            Some("t"),
            "node id `3` is not in the node table n.csv",
        ),
        // A repeated node id (reported at its second line), an index id out of range.
        (
            EdgeTable::new(table("s,t\n"))
                .nodes(NodeTable::new(Table::from_bytes("n.csv", "id\n1\n2\n1\n"))),
            4,
            Some("id"),
            "node id 1 repeats",
        ),
        (
            EdgeTable::new(table("s,t\n"))
                .ids(IdKind::Text)
                .nodes(NodeTable::new(Table::from_bytes(
                    "n.csv",
                    "id\nab\nb\nab\n",
                ))),
            4,
            Some("id"),
            "node id `ab` repeats",
        ),
        (
            EdgeTable::new(table("s,t\n"))
                .ids(IdKind::Index)
                .nodes(NodeTable::new(Table::from_bytes("n.csv", "id\n0\n2\n"))),
            3,
            Some("id"),
            "is not a row",
        ),
        (
            EdgeTable::new(table("s,t\n"))
                .ids(IdKind::Index)
                .nodes(NodeTable::new(Table::from_bytes("n.csv", "id\n1\n1\n"))),
            3,
            Some("id"),
            "node id 1 repeats",
        ),
        // A bad label.
        (
            EdgeTable::new(table("s,t\n")).nodes(
                NodeTable::new(Table::from_bytes("n.csv", "id,y\n1,0\n2,b\n"))
                    .label("y", LabelKind::Integer),
            ),
            3,
            Some("y"),
            "`b` is not a class number",
        ),
        (
            EdgeTable::new(table("s,t\n")).nodes(
                NodeTable::new(Table::from_bytes("n.csv", "id,y\n1,-2\n"))
                    .label("y", LabelKind::Integer),
            ),
            2,
            Some("y"),
            "not a class number",
        ),
        // A vector with a non-number.
        (
            EdgeTable::new(table("s,t\n")).nodes(
                NodeTable::new(Table::from_bytes("n.csv", "id,v\n1,1;2\n2,1;z\n"))
                    .features(Features::vector("v", ';')),
            ),
            3,
            Some("v"),
            "holds `z`, which is not a number",
        ),
        // Invalid UTF-8 in a text id, an unterminated quote.
        (
            EdgeTable::new(Table::from_bytes("t.csv", b"s,t\na,\xff\n".to_vec())).ids(IdKind::Text),
            2,
            Some("t"),
            "UTF-8",
        ),
        (
            EdgeTable::new(table("s,t\n1,2\n\"3,4\n5,6\n")),
            3,
            None,
            "fields where",
        ),
        // A truncated gzip file.
        (
            EdgeTable::new(Table::from_bytes("t.csv.gz", vec![0x1f, 0x8b, 8, 0, 0])),
            1,
            None,
            "cannot read the gzip stream",
        ),
    ];
    for (i, (edges, line, column, reason)) in cases.into_iter().enumerate() {
        let e = edges.read().expect_err(&format!("case {i} read"));
        let (file, got_line, got_column, message) = at(e);
        assert!(
            file == "t.csv" || file == "n.csv" || file == "t.csv.gz",
            "case {i}: {message}"
        );
        assert_eq!(
            (got_line, got_column.as_deref()),
            (line, column),
            "case {i}: {message}"
        );
        assert!(
            message.contains(reason),
            "case {i}: `{message}` lacks `{reason}`"
        );
    }
}

#[test]
fn files_on_disk_and_predictions_written_back_under_the_users_ids() {
    let dir = std::env::temp_dir().join(format!("burn-gnn-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("edges.csv");
    std::fs::write(&path, "src,dst\nn2,n1\nn1,n3\n").unwrap();
    let g = EdgeTable::csv(&path).ids(IdKind::Text).read().unwrap();
    let out = dir.join("pred.csv");
    g.index
        .write_csv(&out, "node", "score", &[0.5, 1.0, 2.0])
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "node,score\nn1,0.5\nn2,1\nn3,2\n"
    );
    assert!(matches!(
        g.index.write_csv(&out, "node", "score", &[1]),
        Err(DataError::InvalidArgument(_))
    ));
    let missing = EdgeTable::csv(dir.join("nope.csv")).read().unwrap_err();
    assert!(matches!(missing, DataError::Io { .. }), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A random graph written as an edge table and a shuffled node table under random ids.
#[derive(Debug, Clone)]
struct RandomTables {
    ids: Vec<String>,
    edges: Vec<(usize, usize)>,
    weights: Vec<f32>,
    features: Vec<[f32; 2]>,
    node_order: Vec<usize>,
    text: bool,
}

fn random_tables() -> impl Strategy<Value = RandomTables> {
    (1usize..12, any::<bool>(), any::<u64>()).prop_flat_map(|(n, text, salt)| {
        (
            prop::collection::vec((0..n, 0..n, -1e3f32..1e3), 0..30),
            prop::collection::vec([-1e3f32..1e3, -1e3f32..1e3], n),
            Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
        )
            .prop_map(move |(edges, features, node_order)| {
                // Distinct ids: a node's number mixed with the salt (text ids may hold commas,
                // quotes and spaces, which the writer quotes).
                let ids = (0..n)
                    .map(|i| {
                        let v = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
                        if text {
                            format!("n\"{i}, {}", v % 97)
                        } else {
                            format!("{}", v as i64)
                        }
                    })
                    .collect();
                RandomTables {
                    ids,
                    weights: edges.iter().map(|e| e.2).collect(),
                    edges: edges.iter().map(|e| (e.0, e.1)).collect(),
                    features,
                    node_order,
                    text,
                }
            })
    })
}

fn write_csv(rows: Vec<Vec<String>>) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.write_record(row).unwrap();
    }
    w.into_inner().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Written and read back, the graph is the one written: every edge joins the rows of its
    /// ids, every node's features sit at its id's row, and rows follow the node table.
    #[test]
    fn written_tables_read_back(t in random_tables()) {
        let mut edge_rows = vec![vec!["s".into(), "t".into(), "w".into()]];
        for (e, &(s, r)) in t.edges.iter().enumerate() {
            edge_rows.push(vec![t.ids[s].clone(), t.ids[r].clone(), t.weights[e].to_string()]);
        }
        let mut node_rows = vec![vec!["f0".into(), "id".into(), "f1".into()]];
        for &i in &t.node_order {
            node_rows.push(vec![t.features[i][0].to_string(), t.ids[i].clone(), t.features[i][1].to_string()]);
        }
        let g = EdgeTable::new(Table::from_bytes("e.csv", write_csv(edge_rows)))
            .weight("w")
            .ids(if t.text { IdKind::Text } else { IdKind::Integer })
            .nodes(NodeTable::new(Table::from_bytes("n.csv", write_csv(node_rows))).id("id").features(Features::Rest))
            .read()
            .unwrap();
        let id_of = |row: i64| g.index.id(row as usize).unwrap().to_string();
        prop_assert_eq!(g.data.num_nodes, t.ids.len());
        for (e, &(s, r)) in t.edges.iter().enumerate() {
            prop_assert_eq!(id_of(g.data.senders[e]), t.ids[s].clone());
            prop_assert_eq!(id_of(g.data.receivers[e]), t.ids[r].clone());
        }
        prop_assert_eq!(f32s(&g.data.edges.named[EDGE_WEIGHT].values), &t.weights[..]);
        let x = f32s(&g.data.nodes.main.as_ref().unwrap().values);
        for (row, &i) in t.node_order.iter().enumerate() {
            prop_assert_eq!(g.index.row(&t.ids[i]), Some(row));
            prop_assert_eq!(&x[row * 2..row * 2 + 2], &t.features[i][..]);
        }
        prop_assert!(!g.data.nodes.named.contains_key(LABELS));
    }

    /// Mutated bytes give a graph or a typed error, never a panic; a graph read from them is
    /// consistent (endpoints within the nodes, one weight per edge).
    #[test]
    fn mutated_tables_never_panic(
        t in random_tables(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut edge_rows = vec![vec!["s".into(), "t".into(), "w".into()]];
        for (e, &(s, r)) in t.edges.iter().enumerate() {
            edge_rows.push(vec![t.ids[s].clone(), t.ids[r].clone(), t.weights[e].to_string()]);
        }
        let mut bytes = write_csv(edge_rows);
        for (at, byte) in flips {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        let kind = if t.text { IdKind::Text } else { IdKind::Integer };
        match EdgeTable::new(Table::from_bytes("e.csv", bytes)).weight(Column::Name("w".into())).ids(kind).read() {
            Ok(g) => {
                let n = g.data.num_nodes as i64;
                prop_assert!(g.data.senders.iter().chain(&g.data.receivers).all(|&r| (0..n).contains(&r)));
                prop_assert_eq!(g.data.edges.named[EDGE_WEIGHT].shape.clone(), vec![g.data.senders.len()]);
            }
            Err(DataError::Table { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}

/// The same table read through the parallel path for plain tables and through the record reader
/// (a comment line forces it): the same graph.
fn both_paths(
    text: &str,
    kind: IdKind,
    weight: bool,
) -> (Result<TableGraph, String>, Result<TableGraph, String>) {
    let read = |table: Table| {
        let mut edges = EdgeTable::new(table).ids(kind);
        if weight {
            edges = edges.weight(2);
        }
        edges.read().map_err(|e| e.to_string())
    };
    let plain = read(table(text));
    // (A missing last newline is supplied first: the same table either way.)
    let newline = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let strict = read(
        Table::from_bytes("t.csv", format!("{text}{newline}# a comment\n")).comment(Some(b'#')),
    );
    (plain, strict)
}

fn edge_text(edges: &[(i64, i64, f32)], crlf: bool) -> String {
    let end = if crlf { "\r\n" } else { "\n" };
    let mut text = format!("s,t,w{end}");
    for (s, t, w) in edges {
        text.push_str(&format!("{s},{t},{w}{end}"));
    }
    text
}

#[test]
fn a_large_table_reads_in_parts_as_the_record_reader_reads_it() {
    // About 4 MiB: several parts of at least 1 MiB, ids both dense and spread over i64.
    let mut rng = burn_gnn_data::synthetic::SplitMix64::new(1);
    // 31-bit values: shifted by 30 they stay within i64.
    let mut next = move || (rng.next_u64() >> 33) as i64;
    let dense: Vec<(i64, i64, f32)> = (0..200_000)
        .map(|_| (next() % 5000, next() % 5000, (next() % 100) as f32 / 8.0))
        .collect();
    let spread: Vec<(i64, i64, f32)> = (0..200_000)
        .map(|_| (next() << 30, -(next() << 29), 0.5))
        .collect();
    for (edges, kind) in [
        (&dense, IdKind::Index),
        (&dense, IdKind::Integer),
        (&spread, IdKind::Integer),
    ] {
        let text = edge_text(edges, false);
        let (plain, strict) = both_paths(&text, kind, true);
        let (plain, strict) = (plain.unwrap(), strict.unwrap());
        assert_eq!(plain, strict);
        // And against the edges themselves.
        for (e, &(s, t, w)) in edges.iter().enumerate().step_by(997) {
            let id = |row: i64| plain.index.id(row as usize).unwrap();
            assert_eq!(
                (id(plain.data.senders[e]), id(plain.data.receivers[e])),
                (NodeId::Integer(s), NodeId::Integer(t))
            );
            assert_eq!(f32s(&plain.data.edges.named[EDGE_WEIGHT].values)[e], w);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random plain tables (dense or spread ids, negative ones, CRLF line ends, a missing last
    /// newline, blank lines, spaces and a stray field) give the same graph, or the same error,
    /// on both paths.
    #[test]
    fn plain_tables_read_as_the_record_reader_reads_them(
        edges in prop::collection::vec((-50i64..50, -50i64..50, -4f32..4.0), 0..40),
        spread in any::<bool>(),
        crlf in any::<bool>(),
        no_last_newline in any::<bool>(),
        oddity in 0usize..7,
        index in any::<bool>(),
    ) {
        let edges: Vec<(i64, i64, f32)> = edges
            .into_iter()
            .map(|(s, t, w)| if spread { (s << 40, t << 40, w) } else { (s, t, w) })
            .collect();
        let mut text = edge_text(&edges, crlf);
        match oddity {
            1 => text.push('\n'),
            2 => text.push_str("3, 4,1\n"),
            3 => text.push_str("3,4,1,9\n"),
            4 => text.push_str("+3,4,1e3\n"),
            // A record cut after a delimiter, at the very end (with or without a newline).
            5 => text.push_str("3,4,"),
            6 => text.push_str("3,"),
            _ => {}
        }
        if no_last_newline {
            text = text.trim_end().to_string();
        }
        let kind = if index { IdKind::Index } else { IdKind::Integer };
        let (plain, strict) = both_paths(&text, kind, true);
        prop_assert_eq!(plain, strict);
    }
}

#[test]
fn heterogeneous_tables_resolve_ids_per_node_type() {
    use burn_gnn_data::io::{HeteroTables, IdKind};
    use burn_gnn_graph::EdgeType;
    // Authors by name, papers by integer id (rows follow the table: paper 7 is row 0), venues
    // by row; the same text "3" is a paper id in one column and nothing else.
    let authors = table("name,team\nada,red\nbob,blue\ncy,red\n");
    let papers = table("id,year,cites\n7,2001,4\n3,1999,0\n");
    let venues = table("row\n0\n");
    let writes = table("who,what,share\nada,3,0.5\nbob,3,0.5\nbob,7,1\ncy,7,1\n");
    let appears = table("paper,venue\n7,0\n3,0\n");
    let tables = HeteroTables::new()
        .node_type(
            "author",
            IdKind::Text,
            NodeTable::new(authors)
                .id("name")
                .label("team", LabelKind::Text),
        )
        .node_type(
            "paper",
            IdKind::Integer,
            NodeTable::new(papers).id("id").features(Features::Rest),
        )
        .node_type("venue", IdKind::Index, NodeTable::new(venues))
        .relation(
            ("paper", "in", "venue"),
            EdgeTable::new(appears).source("paper").target("venue"),
        )
        .relation(
            ("author", "writes", "paper"),
            EdgeTable::new(writes)
                .source("who")
                .target("what")
                .weight("share"),
        );
    let read = tables.read().unwrap();
    let d = &read.data;
    assert_eq!(d.node_sets["author"].num_nodes, 3);
    assert_eq!(
        f32s(&d.node_sets["paper"].features.main.as_ref().unwrap().values),
        [2001.0, 4.0, 1999.0, 0.0]
    );
    let labels = &d.node_sets["author"].features.named[LABELS].values;
    assert_eq!(labels, &FeatureValues::I64(vec![1, 0, 1]));
    assert_eq!(read.classes["author"], ["blue", "red"]);
    // Edge sets in edge-type order: (author, writes, paper) before (paper, in, venue).
    assert_eq!(
        d.edge_sets[0].edge_type,
        EdgeType::new("author", "writes", "paper")
    );
    assert_eq!(d.edge_sets[0].senders, [0, 1, 1, 2]);
    assert_eq!(d.edge_sets[0].receivers, [1, 1, 0, 0]);
    assert_eq!(
        f32s(&d.edge_sets[0].features.named[EDGE_WEIGHT].values),
        [0.5, 0.5, 1.0, 1.0]
    );
    assert_eq!(
        (
            d.edge_sets[1].senders.clone(),
            d.edge_sets[1].receivers.clone()
        ),
        (vec![0, 1], vec![0, 0])
    );
    assert_eq!(read.index["paper"].row_of_integer(7), Some(0));
    let graph = read.graph(&burn::tensor::Device::flex()).unwrap();
    assert_eq!(graph.to_data().unwrap(), read.data);

    // A target that is not a paper id: file, line and column.
    let bad = HeteroTables::new()
        .node_type(
            "author",
            IdKind::Text,
            NodeTable::new(table("name\nada\n")).id("name"),
        )
        .node_type("paper", IdKind::Integer, NodeTable::new(table("id\n7\n")))
        .relation(
            ("author", "writes", "paper"),
            EdgeTable::new(table("who,what\nada,7\nada,8\n")),
        );
    let (file, line, column, message) = at(bad.read().unwrap_err());
    assert_eq!(
        (file.as_str(), line, column.as_deref()),
        ("t.csv", 3, Some("what"))
    );
    assert!(message.contains("node id `8`"), "{message}");
    // A relation whose node type has no table; a relation twice; a node table on a relation.
    let invalid = |t: HeteroTables| matches!(t.read(), Err(DataError::InvalidArgument(_)));
    let author = || NodeTable::new(table("name\nada\n"));
    let edges = || EdgeTable::new(table("a,b\nada,ada\n"));
    assert!(invalid(
        HeteroTables::new()
            .node_type("author", IdKind::Text, author())
            .relation(("author", "cites", "paper"), edges())
    ));
    assert!(invalid(
        HeteroTables::new()
            .node_type("author", IdKind::Text, author())
            .relation(("author", "knows", "author"), edges())
            .relation(("author", "knows", "author"), edges())
    ));
    assert!(invalid(
        HeteroTables::new()
            .node_type("author", IdKind::Text, author())
            .relation(("author", "knows", "author"), edges().nodes(author()))
    ));
}
