//! The book's code and links. Every snippet the book shows from this file sits between
//! `ANCHOR` comments and runs here as a test; `book_links_and_includes_resolve` fails on a
//! chapter missing from disk, a broken relative link, an `{{#include}}` of a missing file or
//! anchor, or an `ignore`d code block.

use std::path::{Path, PathBuf};

use burn::tensor::{Device, Int, Tensor};

#[test]
fn segment_ops_chapter() {
    // ANCHOR: segment_ops
    use burn_gnn::segment::{segment_max, segment_max_or_constant, segment_softmax, segment_sum};

    let device = Device::flex();
    // Four messages into a 3-node graph; node 1 receives none.
    let messages = Tensor::<2>::from_floats([[1.0], [3.0], [5.0], [f32::NAN]], &device);
    let receivers = Tensor::<1, Int>::from_ints([0, 0, 2, 2], &device);
    let sum = segment_sum(messages.clone(), receivers.clone(), 3);
    let max = segment_max(messages.clone(), receivers.clone(), 3);
    let max0 = segment_max_or_constant(messages.clone(), receivers.clone(), 3, 0.0);
    let attention = segment_softmax(messages, receivers, 3);
    // Empty segments get the identity (0 for sum, -inf for max) or the constant asked for;
    // NaN propagates.
    let values = |t: Tensor<2>| t.into_data().iter::<f32>().collect::<Vec<_>>();
    assert_eq!(values(sum)[..2], [4.0, 0.0]);
    assert_eq!(values(max)[..2], [3.0, f32::NEG_INFINITY]);
    assert_eq!(values(max0)[..2], [3.0, 0.0]);
    assert!(values(attention)[2..].iter().all(|a| a.is_nan()));
    // ANCHOR_END: segment_ops
}

#[test]
fn pairwise_chapter() {
    // ANCHOR: pairwise
    use burn_gnn::graph::{Flow, knn_graph};
    use burn_gnn::segment::pairwise::{PairMask, PairMetric, Pairwise};

    let device = Device::flex();
    // Two graphs of a batch: points 0-2 and 3-4 on a line.
    let x = Tensor::<2>::from_floats([[0.0], [1.0], [3.0], [10.0], [10.5]], &device);
    let batch = Tensor::<1, Int>::from_ints([0, 0, 0, 1, 1], &device);
    // Each point's nearest other point of its own graph: ties to the smaller index.
    let near = Pairwise::self_pairs(x.clone(), PairMetric::Euclidean)
        .sorted_groups(batch.clone(), batch.clone())
        .and_then(|p| p.mask(PairMask::same_group()))
        .expect("sorted labels, one per row")
        .exclude_self();
    let (dist, nearest) = near.min();
    assert_eq!(
        nearest.into_data().iter::<i64>().collect::<Vec<_>>(),
        [1, 0, 1, 4, 3]
    );
    assert_eq!(
        dist.into_data().iter::<f32>().collect::<Vec<_>>(),
        [1.0, 1.0, 2.0, 0.5, 0.5]
    );
    // How many other points of its graph lie within 2.5 (strictly) of each point.
    let close = near
        .clone()
        .mask(PairMask::within(2.5))
        .expect("no labels needed");
    assert_eq!(
        close.count().into_data().iter::<i64>().collect::<Vec<_>>(),
        [1, 2, 1, 1, 1]
    );
    // Attention of each point to the others of its graph, never an [N, N] matrix.
    let v = Tensor::<2>::from_floats([[1.0], [2.0], [3.0], [4.0], [5.0]], &device);
    let attended = near.softmax_matmul(v).expect("one value row per point");
    assert_eq!(attended.dims(), [5, 1]);
    // The same neighbourhoods as a graph: edges neighbour -> point, per graph of the batch.
    let g = knn_graph(&x, 1, Some(&batch), false, Flow::SourceToTarget).expect("sorted batch");
    assert_eq!(g.to_coo(), (vec![1, 0, 1, 4, 3], vec![0, 1, 2, 3, 4]));
    // ANCHOR_END: pairwise
}

#[test]
fn segment_plan_chapter() {
    // ANCHOR: segment_plan
    use burn_gnn::segment::{SegmentError, SegmentPlan, Segments};

    let device = Device::flex();
    let receivers = Tensor::<1, Int>::from_ints([2, 0, 2, 1], &device);
    let senders = Tensor::<1, Int>::from_ints([0, 1, 1, 2], &device);
    // Checked and grouped once: a bad id is an error here, never a panic in a kernel later.
    let by_receiver = SegmentPlan::new(receivers, 3).expect("ids in range");
    let by_sender = SegmentPlan::new(senders, 3).expect("ids in range");
    let bad = SegmentPlan::new(Tensor::<1, Int>::from_ints([0, 3], &device), 3);
    assert!(matches!(bad, Err(SegmentError::IdOutOfRange { id: 3, .. })));
    // Every op through the plan: no check, sort or lookup; the backward reuses the plan.
    let messages = Tensor::<2>::from_floats([[1.0], [2.0], [3.0], [4.0]], &device);
    let summed = by_receiver.sum(messages.clone());
    let weights = by_receiver.softmax(messages);
    let x = Tensor::<2>::from_floats([[1.0], [10.0], [100.0]], &device);
    let h = SegmentPlan::spmm(x, &by_sender, &by_receiver, Some(weights));
    let values = |t: Tensor<2>| t.into_data().iter::<f32>().collect::<Vec<_>>();
    assert_eq!(values(summed), [2.0, 4.0, 4.0]);
    assert_eq!(values(h)[1], 100.0); // node 1's only message: x[2] with weight 1
    // ANCHOR_END: segment_plan
}

#[test]
fn segment_masks() {
    // ANCHOR: segment_masks
    use burn::tensor::Bool;
    use burn_gnn::segment::{SegmentIds, SegmentPlan, SegmentStatistics};

    let device = Device::flex();
    let plan = SegmentPlan::new(Tensor::<1, Int>::from_ints([0, 0, 0, 1], &device), 2)
        .expect("ids in range");
    let x = Tensor::<2>::from_floats([[1.0], [f32::NAN], [3.0], [5.0]], &device);
    // One flag per row ([E]) or one per entry (the data's shape): row 1 and segment 1 are out.
    let mask = Tensor::<1, Bool>::from_data([true, false, true, false], &device);
    let m = plan.masked(mask);
    let values = |t: Tensor<2>| t.into_data().iter::<f32>().collect::<Vec<_>>();
    assert_eq!(values(m.sum(x.clone())), [4.0, 0.0]); // the NaN is not there
    let mean = values(m.mean(x.clone()));
    assert!(mean[0] == 2.0 && mean[1].is_nan()); // nothing eligible: NaN, not 0
    assert_eq!(values(m.softmax(x.clone()))[1], 0.0); // 0 at a masked-out entry
    assert_eq!(
        m.argmax(x.clone())
            .into_data()
            .iter::<i64>()
            .collect::<Vec<_>>(),
        [2, -1]
    );
    // Per call, the same ops: the ids are planned for each one.
    let per_call = SegmentIds::new(Tensor::<1, Int>::from_ints([0, 0, 0, 1], &device), 2);
    let all = Tensor::<2, Bool>::from_data([[true], [true], [true], [true]], &device);
    let var = values(per_call.masked(all).variance_corrected(x, 1)); // sample variance
    assert!(var[0].is_nan() && var[1].is_nan()); // NaN in; one row is too few for c = 1
    // ANCHOR_END: segment_masks
}

#[test]
fn graphs_tuple_chapter() {
    // ANCHOR: graphs_tuple
    use burn_gnn::graph::{GraphsTuple, batch};

    let device = Device::flex();
    // A triangle with 2 features per node, built and validated.
    let triangle = GraphsTuple::builder(
        Tensor::<1, Int>::from_ints([0, 1, 2], &device), // senders
        Tensor::<1, Int>::from_ints([1, 2, 0], &device), // receivers
    )
    .nodes(Tensor::<2>::ones([3, 2], &device))
    .build()
    .expect("a valid graph");
    // A single edge between two nodes.
    let pair = GraphsTuple::builder(
        Tensor::<1, Int>::from_ints([0], &device),
        Tensor::<1, Int>::from_ints([1], &device),
    )
    .nodes(Tensor::<2>::zeros([2, 2], &device))
    .build()
    .expect("a valid graph");

    // Batching concatenates nodes and edges and offsets the indices: one block-diagonal graph.
    let both = batch(&[triangle, pair]).expect("same feature layout");
    assert_eq!(
        (both.n_graph(), both.sum_n_node(), both.sum_n_edge()),
        (2, 5, 4)
    );
    let senders: Vec<i64> = both.senders().clone().into_data().iter::<i64>().collect();
    assert_eq!(senders, [0, 1, 2, 3]);

    // Padding to fixed sizes (for static shapes): one padding graph takes the extra nodes and
    // edges; masks say what is real.
    let padded = both.pad_with_graphs(8, 6, 3).expect("enough room");
    assert_eq!(
        (padded.n_graph(), padded.sum_n_node(), padded.sum_n_edge()),
        (3, 8, 6)
    );
    let real: Vec<bool> = padded.node_mask().into_data().iter::<bool>().collect();
    assert_eq!(real, [true, true, true, true, true, false, false, false]);

    // Bad input is a typed error, not a panic.
    let bad = GraphsTuple::builder(
        Tensor::<1, Int>::from_ints([0], &device),
        Tensor::<1, Int>::from_ints([7], &device),
    )
    .nodes(Tensor::<2>::zeros([2, 2], &device))
    .build();
    assert!(bad.unwrap_err().to_string().contains("receivers"));
    // ANCHOR_END: graphs_tuple
}

#[test]
fn reorder_section() {
    // ANCHOR: reorder
    use burn_gnn::graph::GraphsTuple;

    let device = Device::flex();
    // A path of 6 nodes numbered in a scattered order, as a crawl or a hash would number them:
    // 4 - 0 - 5 - 2 - 1 - 3, each edge both ways. Node v has the feature 10 v and the label v.
    let path = [4i64, 0, 5, 2, 1, 3];
    let (senders, receivers): (Vec<i64>, Vec<i64>) = path
        .windows(2)
        .flat_map(|w| [(w[0], w[1]), (w[1], w[0])])
        .unzip();
    let features: Tensor<2> = Tensor::<1, Int>::arange(0..6, &device)
        .float()
        .mul_scalar(10.0)
        .unsqueeze_dim(1);
    let graph = GraphsTuple::from_coo(&senders, &receivers, 6, &device)
        .expect("a valid graph")
        .with_nodes(features)
        .expect("one feature row per node")
        .sort_by_receiver();
    let labels = Tensor::<1, Int>::arange(0..6, &device);
    let widest = |g: &GraphsTuple| {
        let (s, r) = g.to_coo();
        s.iter().zip(&r).map(|(a, b)| (a - b).abs()).max().unwrap()
    };
    assert_eq!(widest(&graph), 5);

    // Reverse Cuthill–McKee: neighbours get nearby ids, so a layer's reads of sender rows
    // stay in cache. Features move with their nodes; edges stay sorted by receiver.
    let reordered = graph.reorder_rcm();
    assert_eq!(widest(&reordered.graph), 1);
    assert!(reordered.graph.is_sorted_by_receiver());
    // `node_ids` holds each node's old id: carry labels (or masks) along with it.
    let labels = labels.select(0, reordered.node_ids.clone());
    let x: Vec<f32> = reordered
        .graph
        .nodes()
        .unwrap()
        .to_data()
        .iter::<f32>()
        .collect();
    let y: Vec<i64> = labels.into_data().iter::<i64>().collect();
    assert!(x.iter().zip(&y).all(|(&x, &y)| x == 10.0 * y as f32));
    // ANCHOR_END: reorder
}

#[test]
fn message_passing_chapter() {
    // ANCHOR: message_passing
    use burn::module::{Module, Param};
    use burn_gnn::graph::GraphsTuple;
    use burn_gnn::nn::{Aggregation, EdgeInputs, MessagePassing};

    /// `x'_i = W x_i + max_j (x_j − x_i)`: a learnable root term plus the largest difference
    /// to a neighbour (an EdgeConv-like layer in a few lines).
    #[derive(Module, Debug)]
    struct MaxDifference {
        root: Param<Tensor<2>>,
    }

    impl MessagePassing for MaxDifference {
        fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
            edges.x_j() - edges.x_i()
        }
        fn aggregation(&self) -> Aggregation {
            Aggregation::Max // nodes without messages get 0
        }
        fn update(&self, aggregated: Tensor<2>, x: Tensor<2>) -> Tensor<2> {
            x.matmul(self.root.val()) + aggregated
        }
    }

    let device = Device::flex();
    let layer = MaxDifference {
        root: Param::from_tensor(Tensor::eye(1, &device)),
    };
    let g = GraphsTuple::from_edge_list(&[(0, 1), (2, 1)], 3, &device).unwrap();
    let x = Tensor::<2>::from_floats([[1.0], [2.0], [5.0]], &device);
    let out: Vec<f32> = layer
        .propagate(x, &g, None)
        .into_data()
        .iter::<f32>()
        .collect();
    assert_eq!(out, [1.0, 5.0, 5.0]); // node 1: 2 + max(1 − 2, 5 − 2)
    // ANCHOR_END: message_passing
}

#[test]
fn own_data_chapter() {
    let dir = std::env::temp_dir().join(format!("burn-gnn-book-own-data-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    // Two tables as a database export might write them.
    std::fs::write(
        dir.join("follows.csv"),
        "follower,followee,since\nada,bob,2019\nbob,cy,2021\ncy,ada,2020\ndee,ada,2024\n",
    )
    .expect("written");
    std::fs::write(
        dir.join("users.csv"),
        "user,age,posts,team\nada,36,120,red\nbob,29,15,blue\ncy,41,3,\ndee,22,48,red\n",
    )
    .expect("written");
    // ANCHOR: own_data
    use burn_gnn::data::io::{EdgeTable, Features, IdKind, LabelKind, NodeTable};

    let users = NodeTable::csv(dir.join("users.csv"))
        .id("user")
        .features(Features::columns(["age", "posts"]))
        .label("team", LabelKind::Text);
    let read = EdgeTable::csv(dir.join("follows.csv"))
        .source("follower")
        .target("followee")
        .weight("since")
        .ids(IdKind::Text)
        .nodes(users)
        .read()
        .expect("well-formed tables");
    // Rows follow the node table: ada 0, bob 1, cy 2, dee 3.
    assert_eq!(read.index.row("cy"), Some(2));
    assert_eq!(read.data.senders, [0, 1, 2, 3]);
    assert_eq!(read.data.receivers, [1, 2, 0, 0]);
    // Text labels are numbered in ascending order; an empty field is unlabelled (-1).
    assert_eq!(
        read.classes.as_deref(),
        Some(&["blue".to_string(), "red".to_string()][..])
    );
    assert_eq!(read.labels(), Some(&[1, 0, -1, 1][..]));

    let graph = read.graph(&Device::flex()).expect("a valid graph");
    let x = graph.node_tensor::<2>().expect("the feature columns");
    assert_eq!(x.dims(), [4, 2]);

    // A score per node, written back under the users' own ids.
    let scores = [0.9, 0.1, 0.5, 0.7];
    read.index
        .write_csv(dir.join("scores.csv"), "user", "score", &scores)
        .expect("written");
    let written = std::fs::read_to_string(dir.join("scores.csv")).expect("read");
    assert_eq!(written, "user,score\nada,0.9\nbob,0.1\ncy,0.5\ndee,0.7\n");
    // ANCHOR_END: own_data

    // ANCHOR: own_data_errors
    use burn_gnn::data::DataError;

    std::fs::write(dir.join("bad.csv"), "follower,followee\nada,bob\nbob,eve\n").expect("written");
    let users = NodeTable::csv(dir.join("users.csv")).id("user");
    let err = EdgeTable::csv(dir.join("bad.csv"))
        .ids(IdKind::Text)
        .nodes(users)
        .read()
        .expect_err("eve is not a user");
    assert!(matches!(err, DataError::Table { line: 3, .. }));
    // "…/bad.csv, line 3, column `followee`: node id `eve` is not in the node table …/users.csv"
    let message = err.to_string();
    assert!(message.contains("bad.csv, line 3, column `followee`: node id `eve` is not in"));
    // ANCHOR_END: own_data_errors
    std::fs::remove_dir_all(&dir).expect("removed");
}

#[test]
fn own_data_numpy_chapter() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/burn-gnn-data/tests/data/numpy");
    // ANCHOR: own_data_numpy
    use burn_gnn::data::io::{NpyArray, NpyDType, NumpyGraph};

    // Saved from Python with NumPy (`crates/burn-gnn-data/tests/data/numpy/make.py`):
    //   np.savez("graph.npz", edge_index=..., x=..., y=..., train_mask=..., edge_attr=...)
    let read = NumpyGraph::npz(fixtures.join("graph.npz"))
        .read()
        .expect("PyG's names");
    assert_eq!(read.data.senders, [0, 1, 1, 2, 3]);
    assert_eq!(read.data.receivers, [1, 0, 2, 3, 0]);
    assert_eq!(read.labels(), Some(&[1, 0, 2, 1][..]));
    assert_eq!(read.masks["train_mask"], [true, true, false, false]);
    let graph = read.graph(&Device::flex()).expect("a valid graph");
    assert_eq!(graph.node_tensor::<2>().expect("x").dims(), [4, 3]);

    // One array: mapped, its header read, its values converted to C order on demand.
    let a = NpyArray::open(fixtures.join("a2_i8_be_F.npy")).expect("a .npy file");
    assert_eq!((a.shape(), a.dtype()), (&[3, 4][..], NpyDType::I64));
    assert_eq!(a.to_i64().expect("integers")[..4], [-5, -4, -3, -2]);
    // ANCHOR_END: own_data_numpy
}

#[test]
fn own_data_hetero_chapter() {
    // ANCHOR: own_data_hetero
    use burn_gnn::data::io::{
        EdgeTable, Features, HeteroTables, IdKind, LabelKind, NodeTable, Table,
    };
    use burn_gnn::graph::EdgeType;

    // One table per node type, one per relation; each relation's columns name ids of its own
    // source and target types (authors by name, papers by number).
    let authors = Table::from_bytes("authors.csv", "name,field\nada,math\nbob,\ncy,physics\n");
    let papers = Table::from_bytes("papers.csv", "id,year,pages\n7,2001,12\n3,1999,30\n");
    let writes = Table::from_bytes("writes.csv", "author,paper\nada,3\nbob,3\ncy,7\n");
    let cites = Table::from_bytes("cites.csv", "citing,cited\n7,3\n");
    let tables = HeteroTables::new()
        .node_type(
            "author",
            IdKind::Text,
            NodeTable::new(authors)
                .id("name")
                .label("field", LabelKind::Text),
        )
        .node_type(
            "paper",
            IdKind::Integer,
            NodeTable::new(papers)
                .id("id")
                .features(Features::columns(["year", "pages"])),
        )
        .relation(
            ("author", "writes", "paper"),
            EdgeTable::new(writes).source("author").target("paper"),
        )
        .relation(
            ("paper", "cites", "paper"),
            EdgeTable::new(cites).source("citing").target("cited"),
        );
    let read = tables
        .read()
        .expect("every endpoint is an id of its own type");
    // Rows follow each node table: paper 7 is row 0, paper 3 row 1.
    assert_eq!(read.index["paper"].row_of_integer(3), Some(1));
    assert_eq!(read.classes["author"], ["math", "physics"]);

    let graph = read.graph(&Device::flex()).expect("a valid graph");
    assert_eq!(graph.num_nodes("author"), 3);
    let writes = graph
        .edge_set(&EdgeType::new("author", "writes", "paper"))
        .expect("the relation");
    let receivers = writes.receivers().to_data().convert::<i64>();
    assert_eq!(receivers.try_into_vec::<i64>().expect("ids"), [1, 1, 0]);

    // A relation naming an id its type lacks is an error at its file, line and column.
    let bad = Table::from_bytes("writes.csv", "author,paper\nada,5\n");
    let err = tables
        .relation(
            ("author", "wrote", "paper"),
            EdgeTable::new(bad).source("author").target("paper"),
        )
        .read()
        .expect_err("paper 5 is not in papers.csv");
    assert!(
        err.to_string()
            .contains("writes.csv, line 2, column `paper`"),
        "{err}"
    );
    // ANCHOR_END: own_data_hetero
}

#[cfg(feature = "parquet")]
#[test]
fn own_data_parquet_chapter() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/burn-gnn-data/tests/data/parquet");
    // ANCHOR: own_data_parquet
    use burn_gnn::data::io::{EdgeTable, Features, IdKind, LabelKind, NodeTable, Table};

    // Written by pyarrow (`crates/burn-gnn-data/tests/data/parquet/make.py`): an edge list of
    // int64 columns in four row groups, and a node table with text ids, numbers, a list<float>
    // embedding, a label with a null and a dictionary-encoded column.
    let edges = EdgeTable::new(Table::parquet(fixtures.join("edges.parquet")))
        .source("src")
        .target("dst")
        .weight("weight")
        .ids(IdKind::Index)
        .read()
        .expect("a valid table");
    assert_eq!(edges.data.senders.len(), 12);

    let nodes = NodeTable::new(Table::parquet(fixtures.join("nodes.parquet")))
        .id("id")
        .features(Features::vector("emb", ','))
        .label("team", LabelKind::Text);
    let graph = EdgeTable::new(Table::from_bytes("edges.csv", "s,t\nn7,n3\nn0,n7\n"))
        .ids(IdKind::Text)
        .nodes(nodes)
        .read()
        .expect("every endpoint is a node id");
    assert_eq!(graph.data.nodes.main.as_ref().expect("emb").shape, [4, 2]);
    // The null label is an unlabelled node (-1), as an empty CSV field.
    assert_eq!(graph.labels(), Some(&[1, -1, 0, 1][..]));
    // ANCHOR_END: own_data_parquet
}

#[test]
fn own_data_ogb_chapter() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/burn-gnn-data/tests/data/ogb");
    // ANCHOR: own_data_ogb
    use burn_gnn::data::ogb::{Evaluator, OgbInfo, OgbNodeDataset};

    // OGB's master table describes each dataset: layout, split scheme, metric.
    let arxiv = OgbInfo::get("ogbn-arxiv").expect("OGB lists it");
    assert_eq!(
        (arxiv.split.as_str(), arxiv.metric.name()),
        ("time", "acc".to_string())
    );

    // A dataset unpacked from OGB's zip: `OgbNodeDataset::open("ogbn-arxiv", Some(dir))` finds
    // `dir/ogbn_arxiv/raw/...`. This one is in OGB's binary layout (raw/data.npz), as
    // ogbn-papers100M ships, so it is read with that dataset's description.
    let papers = OgbInfo::get("ogbn-papers100M").expect("OGB lists it");
    let ds = OgbNodeDataset::open_dir(&fixtures.join("binary_node"), papers).expect("OGB's layout");
    assert_eq!(ds.graph.num_nodes, 6);
    assert_eq!(
        (ds.split.train.as_slice(), ds.split.test.as_slice()),
        (&[0, 2][..], &[5][..])
    );
    let graph = ds.graph(&Device::flex()).expect("a valid graph");
    assert_eq!(graph.sum_n_edge(), 5);

    // OGB's evaluator: y_true for the test nodes, the model's predicted classes.
    let y_true = ds.y_true(&ds.split.test).expect("node ids");
    let acc = ds
        .evaluator()
        .eval(&y_true, &[2.0], [1, 1])
        .expect("OGB's input checks");
    assert_eq!(acc, 1.0);
    // Link metrics: Hits@50 against one shared set of negatives (ogbl-collab).
    let collab = Evaluator::new("ogbl-collab").expect("OGB lists it");
    let pos = [0.9, 0.2]; // the 50th best negative scores 0.25
    let neg: Vec<f64> = (0..100).map(|i| i as f64 / 200.0).collect();
    assert_eq!(collab.eval_link(&pos, &neg).expect("scores"), 0.5);
    // ANCHOR_END: own_data_ogb
}

#[test]
fn own_data_transforms_chapter() {
    // ANCHOR: own_data_transforms
    use burn_gnn::data::{Amount, NodeSplit, RandomLinkSplit, RandomNodeSplit, TRAIN_MASK};
    use burn_gnn::graph::transforms::{
        LargestConnectedComponent, NormalizeFeatures, RemoveSelfLoops, ToUndirected,
    };
    use burn_gnn::graph::{Compose, FeatureSetKind, GraphsTuple, Transform};

    let device = Device::flex();
    // A triangle with a self loop, a separate edge 3 -> 4, labels and features.
    let g = GraphsTuple::from_edge_list(&[(0, 1), (1, 2), (2, 0), (2, 2), (3, 4)], 5, &device)
        .expect("valid")
        .with_nodes(Tensor::<2>::from_floats(
            [[1., 3.], [2., 2.], [0., 4.], [1., 1.], [5., 0.]],
            &device,
        ))
        .expect("one row per node")
        .with_feature(
            FeatureSetKind::Nodes,
            Some("y"),
            Some(Tensor::<1, Int>::from_ints([0, 1, 0, 1, 0], &device).into()),
        )
        .expect("one label per node");
    // PyG's pipeline as one value: each step a small struct with typed parameters.
    let pipeline = Compose::new()
        .push(RemoveSelfLoops)
        .push(LargestConnectedComponent::default())
        .push(ToUndirected::default())
        .push(NormalizeFeatures)
        .push(RandomNodeSplit::new(NodeSplit::TrainRest {
            val: Amount::Count(1),
            test: Amount::Count(1),
        }));
    let out = pipeline.apply(&g).expect("every step applies");
    assert_eq!((out.sum_n_node(), out.sum_n_edge()), (3, 6));
    let train = out
        .feature(FeatureSetKind::Nodes, TRAIN_MASK)
        .expect("written");
    assert_eq!(train.to_data().iter::<i64>().sum::<i64>(), 1);
    // A split that returns its own type ends a typed chain.
    let split = RemoveSelfLoops
        .then(ToUndirected::default())
        .then(RandomLinkSplit::new(0.2, 0.2).with_undirected(true))
        .apply(&g)
        .expect("an undirected graph");
    assert_eq!(
        split.train.pos_senders.len() + split.val.pos_senders.len() + split.test.pos_senders.len(),
        4
    );
    // ANCHOR_END: own_data_transforms
}

#[test]
fn datasets_chapter() {
    // ANCHOR: datasets
    use burn_gnn::data::{KarateClub, synthetic};

    let device = Device::flex();
    // Zachary's karate club is embedded: no download.
    let karate = KarateClub::load();
    let graph = karate.graph(&device).expect("valid");
    assert_eq!((graph.sum_n_node(), graph.sum_n_edge()), (34, 156));

    // Seeded generators: the same seed gives the same graph on every machine and release.
    let er = synthetic::erdos_renyi(1000, 0.01, false, 7).expect("a probability");
    let sbm = synthetic::stochastic_block_model(
        &[500, 500],
        &[vec![0.02, 0.001], vec![0.001, 0.02]],
        false,
        7,
    )
    .expect("symmetric probabilities");
    let ba = synthetic::barabasi_albert(1000, 3, 7).expect("m < n");
    assert_eq!(ba.num_edges(), 2 * 3 * (1000 - 3));
    // A ring of 1000 nodes joined to their 10 nearest, 10 % of the edges rewired at random.
    let ws = synthetic::watts_strogatz(1000, 10, 0.1, 7).expect("even k < n");
    assert_eq!(ws.num_edges(), 1000 * 10);
    assert_eq!(er, synthetic::erdos_renyi(1000, 0.01, false, 7).unwrap());
    let x = synthetic::random_features(1000, 16, 7, &device);
    let g = sbm.graph(Some(x), &device).expect("valid");
    assert_eq!(g.sum_n_node(), 1000);
    // ANCHOR_END: datasets
}

#[test]
fn tu_datasets_chapter() {
    // ANCHOR: tu_datasets
    use burn_gnn::data::{TuDataset, TuFeatures, stratified_k_fold};
    use burn_gnn::graph::{GraphsTuple, batch};

    let device = Device::flex();
    // MUTAG is embedded; `TuDataset::open` finds the others (data dir, cache, download).
    let mutag = TuDataset::embedded("MUTAG").expect("embedded");
    assert_eq!(
        (mutag.graphs.len(), mutag.num_nodes(), mutag.num_edges()),
        (188, 3371, 7442)
    );
    // Raw labels {-1, 1} become classes 0 and 1; node labels are one-hot (7 kinds of atom).
    assert_eq!(mutag.class_values, vec![-1, 1]);
    let features = TuFeatures::default(); // PyG's default: the one-hot node labels
    assert_eq!(mutag.num_node_features(features), 7);

    // Ten seeded stratified folds; each fold's training graphs batched into one graph.
    let folds = stratified_k_fold(&mutag.labels(), 10, 0).expect("2 <= k <= 188");
    let graphs: Vec<GraphsTuple> = folds[0]
        .train
        .iter()
        .map(|&i| {
            let data = mutag.graph_data(i, features).expect("graph i");
            GraphsTuple::from_graph_data(&data, &device).expect("valid")
        })
        .collect();
    let train = batch(&graphs).expect("one feature layout");
    assert_eq!(train.n_graph(), 188 - folds[0].test.len());
    // ANCHOR_END: tu_datasets
}

/// Relative links `](target)` of a markdown text, without fragments; web links skipped.
#[test]
fn hetero_chapter() {
    // ANCHOR: hetero_graph
    use std::collections::BTreeMap;

    use burn_gnn::graph::{EdgeType, HeteroGraph};
    use burn_gnn::nn::HeteroSageConfig;

    let device = Device::flex();
    let writes = EdgeType::new("author", "writes", "paper");
    let cites = EdgeType::new("paper", "cites", "paper");
    // Two authors, three papers with 4 features each; senders index the source type's nodes,
    // receivers the target type's.
    let g = HeteroGraph::builder(&device)
        .node_features("author", Tensor::<2>::ones([2, 4], &device))
        .node_features("paper", Tensor::<2>::ones([3, 4], &device))
        .edge_list(writes.clone(), &[0, 0, 1], &[0, 1, 2])
        .edge_list(cites.clone(), &[1, 2], &[0, 0])
        .build()
        .unwrap();
    assert_eq!(g.metadata().0, ["author", "paper"]);

    // Batching offsets each type's indices by that type's nodes in the graphs before.
    let batch = HeteroGraph::batch(&[g.clone(), g.clone()]).unwrap();
    assert_eq!(
        (
            batch.n_graph(),
            batch.num_nodes("paper"),
            batch.num_edges(&writes)
        ),
        (2, 6, 6)
    );
    // Fixed sizes: one padding graph takes the extra nodes and edges.
    let padded = batch
        .pad_with_graphs(
            &BTreeMap::from([("paper".into(), 8), ("author".into(), 5)]),
            &BTreeMap::from([(cites.clone(), 6)]),
            3,
        )
        .unwrap();
    assert_eq!(
        padded
            .graph_mask()
            .into_data()
            .iter::<bool>()
            .collect::<Vec<_>>(),
        [true, true, false]
    );
    assert_eq!(padded.unpad_with_graphs().num_nodes("paper"), 6);

    // One SAGE conv per relation, summed per target type; authors receive no relation here
    // and keep their features.
    let layer = HeteroSageConfig::new(4, 8, g.edge_types()).init(&device);
    let out = layer.forward(&g.x_dict(), &g).unwrap();
    assert_eq!(
        (out["paper"].dims(), out["author"].dims()),
        ([3, 8], [2, 4])
    );

    // The homogeneous form, with `node_type` / `edge_type` features, for RGCN and friends.
    let h = g.to_homogeneous().unwrap();
    assert_eq!((h.sum_n_node(), h.sum_n_edge()), (5, 5));
    let back = HeteroGraph::from_homogeneous(&h, &g.node_types(), &g.edge_types()).unwrap();
    assert_eq!(back.to_data().unwrap(), g.to_data().unwrap());
    // ANCHOR_END: hetero_graph
}

fn links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')')?];
            let target = target.split('#').next().unwrap_or_default();
            (!target.is_empty() && !target.contains("://") && !target.starts_with("mailto:"))
                .then(|| target.to_string())
        })
        .collect()
}

#[test]
fn book_links_and_includes_resolve() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("book/src/SUMMARY.md");
    let mut chapters: Vec<PathBuf> = vec![src.join("SUMMARY.md")];
    for target in links(&summary) {
        let path = src.join(&target);
        assert!(
            path.is_file(),
            "SUMMARY.md lists {target}, which does not exist"
        );
        chapters.push(path);
    }
    assert!(chapters.len() > 5, "the book has chapters");
    for chapter in &chapters {
        let text = std::fs::read_to_string(chapter).unwrap();
        let dir = chapter.parent().unwrap();
        for target in links(&text) {
            assert!(
                dir.join(&target).exists(),
                "{}: broken link to {target}",
                chapter.display()
            );
        }
        for (i, _) in text.match_indices("{{#include ") {
            let rest = &text[i + "{{#include ".len()..];
            let spec = rest[..rest.find("}}").expect("closed include")].trim();
            let (file, anchor) = spec
                .split_once(':')
                .map_or((spec, None), |(f, a)| (f, Some(a)));
            let path = dir.join(file);
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("{}: includes missing {file}", chapter.display()));
            if let Some(anchor) = anchor.filter(|a| !a.chars().all(|c| c.is_ascii_digit())) {
                assert!(
                    source.contains(&format!("ANCHOR: {anchor}"))
                        && source.contains(&format!("ANCHOR_END: {anchor}")),
                    "{}: {file} has no anchor `{anchor}`",
                    chapter.display()
                );
            }
        }
        for fence in ["```rust,ignore", "```ignore", "```rust, ignore"] {
            assert!(
                !text.contains(fence),
                "{}: code must be included and compiled, not `ignore`d",
                chapter.display()
            );
        }
    }
}

#[test]
fn zoo_links_name_public_layers() {
    // The zoo tables link each layer to its API docs; a renamed or removed layer must not
    // leave a dead link behind. (A new layer needs no page: rustdoc is the reference.)
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = String::new();
    let mut dirs = vec![root.join("crates/burn-gnn-nn/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources += &std::fs::read_to_string(path).unwrap();
            }
        }
    }
    const PREFIX: &str = "https://docs.rs/burn-gnn-nn/latest/burn_gnn_nn/";
    let mut links = 0;
    for chapter in ["model-zoo.md", "hetero.md"] {
        let text = std::fs::read_to_string(root.join("book/src").join(chapter)).unwrap();
        for (at, _) in text.match_indices(PREFIX) {
            let rest = &text[at + PREFIX.len()..];
            let page = &rest[..rest.find(')').expect("a closed link")];
            let (kind, name) = page
                .strip_suffix(".html")
                .and_then(|p| p.split_once('.'))
                .unwrap_or_else(|| panic!("{chapter}: unexpected docs link {page}"));
            assert!(
                sources.contains(&format!("pub {kind} {name}")),
                "{chapter} links {kind} {name}, which burn-gnn-nn does not define"
            );
            links += 1;
        }
    }
    assert!(links >= 17, "{links} links");
}

#[test]
fn link_prediction_chapter() {
    // ANCHOR: link_prediction
    use burn::module::Module;
    use burn::optim::{AdamConfig, GradientsParams};
    use burn_gnn::data::{KarateClub, RandomLinkSplit};
    use burn_gnn::nn::{Gae, GcnConfig, roc_auc};

    let device = Device::flex().autodiff();
    let karate = KarateClub::load().graph(&device).expect("embedded");
    let (senders, receivers) = karate.to_coo();
    // 85 / 5 / 10 of the 78 friendships, each supervised once; messages pass along the
    // training edges (both directions).
    let split = RandomLinkSplit::new(0.05, 0.1)
        .with_undirected(true)
        .with_seed(0)
        .split(&senders, &receivers, 34)
        .expect("a sparse, undirected graph");
    let graph = split
        .train
        .message_graph(&karate)
        .expect("the split's graph");
    let x = Tensor::<2>::eye(34, &device); // no features: one-hot node ids
    let ids = |v: &[i64]| Tensor::<1, Int>::from_ints(v, &device);
    let pos = (
        ids(&split.train.pos_senders),
        ids(&split.train.pos_receivers),
    );

    let mut gae = Gae::new(GcnConfig::new(34, 16, 8).init(&device));
    let mut optim = AdamConfig::new().with_epsilon(1e-8).init();
    for epoch in 0..200 {
        // Fresh negatives every epoch, never a training edge.
        let (ns, nr) = split.train_negatives(epoch).expect("sparse enough");
        let z = gae.encode(x.clone(), &graph);
        let loss = gae.recon_loss(z, pos.clone(), (ids(&ns), ids(&nr)));
        let grads = GradientsParams::from_grads(loss.backward(), &gae);
        gae = optim.step(0.01, gae, grads);
    }

    // Score training positives against unseen negatives, without autodiff.
    let eval = gae.valid();
    let (x, graph) = (x.inner(), graph.to_device(&Device::flex()));
    let (ns, nr) = split.train_negatives(1_000).expect("sparse enough");
    let ids = |v: &[i64]| Tensor::<1, Int>::from_ints(v, &Device::flex());
    let z = eval.encode(x, &graph);
    let logits = |s: &[i64], r: &[i64]| eval.decode(z.clone(), ids(s), ids(r));
    let scores: Vec<f64> = Tensor::cat(
        vec![
            logits(&split.train.pos_senders, &split.train.pos_receivers),
            logits(&ns, &nr),
        ],
        0,
    )
    .into_data()
    .iter::<f64>()
    .collect();
    let n_pos = split.train.pos_senders.len();
    let labels: Vec<bool> = (0..scores.len()).map(|i| i < n_pos).collect();
    let auc = roc_auc(&scores, &labels).expect("both classes");
    assert!(auc > 0.85, "training AUC {auc}");
    // ANCHOR_END: link_prediction
}
