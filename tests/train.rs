//! `burn_gnn::train` under burn-train's `Learner`: the parameters a `Learner` run ends with
//! equal those of a hand-written loop over the same batches (one device, and the multi-device
//! strategy with one CPU device listed twice, whose gradients are summed per step), and the
//! loaders' items and errors.

use std::path::PathBuf;
use std::sync::Arc;

use burn::data::dataloader::{DataLoader, DataLoaderBuilder};
use burn::data::dataset::InMemDataset;
use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn::train::metric::{AurocMetric, LossMetric};
use burn::train::{ExecutionStrategy, Learner, MultiDeviceOptim, SupervisedTraining};
use burn_gnn::data::synthetic::{SplitMix64, stochastic_block_model};
use burn_gnn::data::{
    InNeighbors, KarateClub, LinkNeighborLoader, NegativeSampling, NeighborLoader, RandomLinkSplit,
};
use burn_gnn::graph::GraphsTuple;
use burn_gnn::nn::{
    GcnConfig, Gin, GinConfig, GraphSage, GraphSageConfig, InnerProductDecoder, global_mean_pool,
};
use burn_gnn::train::{
    FullGraphLinkLoader, FullGraphLoader, GraphBatcher, GraphClassification, GraphItem, GraphModel,
    LinkBatch, LinkPrediction, NodeBatch, NodeClassification, SampledLinkLoader, SampledNodeLoader,
};

const LR: f64 = 0.01;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("burn-gnn-train-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A 4-block model graph of 240 nodes with 8 noisy features and its blocks as labels.
fn block_graph() -> (Arc<InNeighbors>, Vec<f32>, Vec<i64>) {
    let (n, blocks) = (240, 4);
    let probs: Vec<Vec<f64>> = (0..blocks)
        .map(|a| {
            (0..blocks)
                .map(|b| if a == b { 0.12 } else { 0.01 })
                .collect()
        })
        .collect();
    let g = stochastic_block_model(&[n / blocks; 4], &probs, true, 3).unwrap();
    let labels = g.blocks.clone().unwrap();
    let mut rng = SplitMix64::new(5);
    let x = (0..n * 8)
        .map(|i| rng.normal() as f32 + 0.3 * (labels[i / 8] == (i % 4) as i64) as i32 as f32)
        .collect();
    (
        Arc::new(InNeighbors::new(&g.senders, &g.receivers, n).unwrap()),
        x,
        labels,
    )
}

fn params<M: Module>(model: &M) -> Vec<Vec<f32>> {
    struct Collect(Vec<Vec<f32>>);
    impl burn::module::ModuleVisitor for Collect {
        fn visit_float<const D: usize>(&mut self, param: &burn::module::Param<Tensor<D>>) {
            self.0.push(
                param
                    .val()
                    .into_data()
                    .convert::<f32>()
                    .try_into_vec::<f32>()
                    .unwrap(),
            );
        }
    }
    let mut c = Collect(vec![]);
    model.visit(&mut c);
    c.0
}

fn assert_close(a: &[Vec<f32>], b: &[Vec<f32>], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: parameter count");
    let mut worst = 0f32;
    for (pa, pb) in a.iter().zip(b) {
        assert_eq!(pa.len(), pb.len());
        for (x, y) in pa.iter().zip(pb) {
            worst = worst.max((x - y).abs() / (1.0 + y.abs()));
        }
    }
    assert!(worst < 1e-5, "{what}: parameters differ by {worst}");
}

/// The seeds' loss of one sampled batch, written from the `SampledBatch` itself.
fn sampled_loss(
    model: &GraphSage,
    loader: &NeighborLoader,
    seeds: &[i64],
    (epoch, b): (u64, u64),
    x: &Tensor<2>,
    labels: &[i64],
) -> Tensor<1> {
    let batch = loader.sample(seeds, epoch, b);
    let g = batch.graph(x, &x.device()).unwrap();
    let logits = model
        .forward(g.node_tensor::<2>().unwrap(), &g)
        .slice(0..batch.num_seeds);
    let y: Vec<i64> = batch.nodes[..batch.num_seeds]
        .iter()
        .map(|&v| labels[v as usize])
        .collect();
    let y = Tensor::<1, Int>::from_data(TensorData::new(y, [batch.num_seeds]), &x.device());
    CrossEntropyLossConfig::new()
        .init(&x.device())
        .forward(logits, y)
}

/// The seed batches of `loader`'s epoch `epoch`, as `NeighborLoader::epoch` cuts them.
fn seed_batches(loader: &NeighborLoader, epoch: u64) -> Vec<Vec<i64>> {
    loader
        .epoch(epoch)
        .map(|b| b.nodes[..b.num_seeds].to_vec())
        .collect()
}

/// What a `Learner` run over `strategy` ends with, from `model`, with Adam at a constant rate.
fn learner_run(
    model: GraphSage,
    strategy: ExecutionStrategy,
    loader: &NeighborLoader,
    x: &Tensor<2>,
    labels: &[i64],
    name: &str,
) -> Vec<Vec<f32>> {
    let device = Device::flex().autodiff();
    let valid: Vec<i64> = (0..240).filter(|v| v % 3 == 0).collect();
    let (lists, _, _) = block_graph();
    let valid = NeighborLoader::new(lists, valid, vec![4, 3], 64)
        .unwrap()
        .with_shuffle(false);
    let learner = Learner::new(NodeClassification::new(model), AdamConfig::new().init(), LR);
    let dl_train = Arc::new(
        SampledNodeLoader::new(loader.clone(), x.clone(), labels.to_vec(), &device).unwrap(),
    );
    let dl_valid = Arc::new(
        SampledNodeLoader::new(valid, x.clone(), labels.to_vec(), &Device::flex()).unwrap(),
    );
    let result = SupervisedTraining::new(scratch(name), dl_train, dl_valid)
        .num_epochs(2)
        .with_application_logger(None)
        .with_training_strategy(burn::train::TrainingStrategy::Default(strategy))
        .launch(learner);
    assert!(result.error.is_none(), "{:?}", result.error);
    params(&result.model.model)
}

/// The training loader (two thirds of the nodes, batches of 32, fan-outs 4 and 3), features on
/// the plain Flex device, labels, and a fresh model on the autodiff device.
fn setup() -> (NeighborLoader, Tensor<2>, Vec<i64>, GraphSage) {
    let (lists, x, labels) = block_graph();
    let x = Tensor::<2>::from_data(TensorData::new(x, [240, 8]), &Device::flex());
    let train: Vec<i64> = (0..240).filter(|v| v % 3 != 0).collect();
    let loader = NeighborLoader::new(lists, train, vec![4, 3], 32)
        .unwrap()
        .with_seed(9);
    let model = GraphSageConfig::new(8, 16, 4).init(&Device::flex().autodiff());
    (loader, x, labels, model)
}

#[test]
fn learner_on_one_device_takes_the_same_steps_as_a_plain_loop() {
    let (loader, x, labels, model) = setup();
    let device = Device::flex().autodiff();
    let initial = params(&model);
    let learned = learner_run(
        model.clone(),
        ExecutionStrategy::single(device.clone()),
        &loader,
        &x,
        &labels,
        "single",
    );
    // The reference: a plain Adam loop over the loader's batches of epochs 0 and 1.
    let x = x.to_device(&device);
    let mut model = model;
    let mut optim = AdamConfig::new().init();
    for epoch in 0..2 {
        for (b, seeds) in seed_batches(&loader, epoch).iter().enumerate() {
            let loss = sampled_loss(&model, &loader, seeds, (epoch, b as u64), &x, &labels);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(LR, model, grads);
        }
    }
    assert_ne!(learned, initial, "training moved the parameters");
    assert_close(&learned, &params(&model), "one device");
}

#[test]
fn multi_device_strategy_sums_each_devices_gradients_per_step() {
    let (loader, x, labels, model) = setup();
    let device = Device::flex().autodiff();
    let initial = params(&model);
    let learned = learner_run(
        model.clone(),
        ExecutionStrategy::multi(
            vec![device.clone(), device.clone()],
            MultiDeviceOptim::OptimMainDevice,
        ),
        &loader,
        &x,
        &labels,
        "multi",
    );
    assert_ne!(learned, initial, "training moved the parameters");
    // The reference: each device takes a contiguous half of the seeds; every step sums the
    // gradients of one batch from each half (the sum of the two losses), then one Adam step.
    let n = loader.seeds().len();
    let halves = [loader.slice(0..n / 2), loader.slice(n / 2..n)];
    let x = x.to_device(&device);
    let mut model = model;
    let mut optim = AdamConfig::new().init();
    for epoch in 0..2 {
        let batches: Vec<Vec<Vec<i64>>> = halves.iter().map(|h| seed_batches(h, epoch)).collect();
        let steps = batches.iter().map(Vec::len).max().unwrap();
        for b in 0..steps {
            let loss = (0..2)
                .filter(|&d| b < batches[d].len())
                .map(|d| {
                    sampled_loss(
                        &model,
                        &halves[d],
                        &batches[d][b],
                        (epoch, b as u64),
                        &x,
                        &labels,
                    )
                })
                .reduce(|a, c| a + c)
                .unwrap();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(LR, model, grads);
        }
    }
    assert_close(&learned, &params(&model), "two devices");
}

#[test]
fn sampled_loader_batches_score_the_seeds_and_split_into_shares() {
    let (loader, x, labels, _) = setup();
    let dl =
        SampledNodeLoader::new(loader.clone(), x.clone(), labels.clone(), &Device::flex()).unwrap();
    assert_eq!(dl.num_items(), 160);
    let mut seen = vec![];
    let mut it = dl.iter();
    while let Some(batch) = it.next() {
        let NodeBatch {
            graph,
            x: bx,
            rows,
            targets,
        } = batch.unwrap();
        let rows: Vec<i64> = rows
            .into_data()
            .convert::<i64>()
            .try_into_vec::<i64>()
            .unwrap();
        assert_eq!(
            rows,
            (0..rows.len() as i64).collect::<Vec<_>>(),
            "the seeds come first"
        );
        assert_eq!(bx.dims()[0], graph.sum_n_node());
        seen.extend(
            targets
                .into_data()
                .convert::<i64>()
                .try_into_vec::<i64>()
                .unwrap(),
        );
        assert_eq!(it.progress().items_processed, seen.len());
    }
    assert_eq!(it.progress().items_total, 160);
    // Every training seed scored once per epoch, with its own label.
    let mut expected: Vec<i64> = loader.seeds().iter().map(|&v| labels[v as usize]).collect();
    expected.sort();
    seen.sort();
    assert_eq!(seen, expected);
    // The shares of a split partition the seeds.
    let shares = [dl.slice(0, 100), dl.slice(100, 160)];
    assert_eq!(
        shares.iter().map(|s| s.num_items()).collect::<Vec<_>>(),
        [100, 60]
    );
    // Mismatched inputs are typed errors.
    let short = SampledNodeLoader::new(loader, x, labels[..10].to_vec(), &Device::flex());
    assert!(short.is_err_and(|e| e.to_string().contains("240 nodes")));
}

#[test]
fn full_graph_loader_trains_like_a_full_batch_loop() {
    let device = Device::flex().autodiff();
    let karate = KarateClub::load();
    let graph = karate.graph(&device).unwrap();
    let x = graph.node_tensor::<2>().unwrap();
    let labels = karate.labels(&device);
    let rows: Vec<i64> = (0..34).filter(|v| v % 2 == 0).collect();
    let model = GcnConfig::new(34, 8, 4).init(&device);
    let dl = |rows: Vec<i64>, g: &GraphsTuple, x: &Tensor<2>, y: &Tensor<1, Int>| {
        Arc::new(FullGraphLoader::new(g.clone(), x.clone(), y.clone(), rows).unwrap())
    };
    let valid_rows: Vec<i64> = (0..34).filter(|v| v % 2 == 1).collect();
    let inner = Device::flex();
    let result = SupervisedTraining::new(
        scratch("full"),
        dl(rows.clone(), &graph, &x, &labels),
        dl(
            valid_rows,
            &graph.to_device(&inner),
            &x.clone().to_device(&inner),
            &labels.clone().to_device(&inner),
        ),
    )
    .num_epochs(5)
    .with_application_logger(None)
    .with_training_strategy(ExecutionStrategy::single(device.clone()).into())
    .launch(Learner::new(
        NodeClassification::new(model.clone()),
        AdamConfig::new().init(),
        LR,
    ));
    assert!(result.error.is_none());
    let rows_t = Tensor::<1, Int>::from_data(TensorData::new(rows.clone(), [rows.len()]), &device);
    let mut reference = model;
    let mut optim = AdamConfig::new().init();
    for _ in 0..5 {
        let logits = reference
            .forward(x.clone(), &graph)
            .select(0, rows_t.clone());
        let loss = CrossEntropyLossConfig::new()
            .init(&device)
            .forward(logits, labels.clone().select(0, rows_t.clone()));
        let grads = GradientsParams::from_grads(loss.backward(), &reference);
        reference = optim.step(LR, reference, grads);
    }
    assert_close(
        &params(&result.model.model),
        &params(&reference),
        "full graph",
    );
    // A slice without rows yields no batch; bad rows are typed errors.
    let loader = FullGraphLoader::new(graph.clone(), x.clone(), labels.clone(), rows).unwrap();
    assert_eq!(loader.slice(3, 3).iter().count(), 0);
    assert_eq!(loader.slice(0, 5).iter().count(), 1);
    let bad = FullGraphLoader::new(graph, x, labels, vec![34]);
    assert!(bad.is_err_and(|e| e.to_string().contains("row 34")));
}

/// GIN, mean pooling and a linear classifier.
#[derive(Module, Debug)]
struct Pooled {
    gin: Gin,
    head: Linear,
}

impl GraphModel for Pooled {
    fn graph_logits(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.head
            .forward(global_mean_pool(self.gin.forward(x, graph), graph))
    }
}

#[test]
fn graph_batcher_feeds_burns_data_loader_and_the_loss_is_per_graph() {
    let device = Device::flex().autodiff();
    let items: Vec<GraphItem> = (0..6)
        .map(|i| {
            let g = burn_gnn::data::synthetic::erdos_renyi(5 + i, 0.4, false, i as u64).unwrap();
            let n = g.num_nodes;
            let graph = GraphsTuple::from_coo(&g.senders, &g.receivers, n, &device)
                .unwrap()
                .with_nodes(Tensor::<2>::ones([n, 3], &device))
                .unwrap();
            GraphItem::new(&graph, (i % 2) as i64).unwrap()
        })
        .collect();
    let dl = DataLoaderBuilder::new(GraphBatcher)
        .batch_size(4)
        .set_device(device.clone())
        .build(InMemDataset::new(items.clone()));
    let batches: Vec<_> = dl.iter().map(Result::unwrap).collect();
    assert_eq!(
        batches
            .iter()
            .map(|b| b.graph.n_graph())
            .collect::<Vec<_>>(),
        [4, 2]
    );
    let model = GraphClassification::new(Pooled {
        gin: GinConfig::new(3, 8, 8).init(&device),
        head: LinearConfig::new(8, 2).init(&device),
    });
    // The wrapper's loss is the mean over graphs of each graph's own cross-entropy.
    let out = model.forward_classification(batches[0].clone());
    let per_graph: f32 = (0..4)
        .map(|i| {
            let item = &items[i];
            let g = GraphsTuple::from_graph_data(&item.graph, &device).unwrap();
            let logits = model.model.graph_logits(g.node_tensor::<2>().unwrap(), &g);
            let y = Tensor::<1, Int>::from_data(TensorData::new(vec![item.label], [1]), &device);
            CrossEntropyLossConfig::new()
                .init(&device)
                .forward(logits, y)
                .into_scalar::<f32>()
        })
        .sum::<f32>()
        / 4.0;
    let loss: f32 = out.loss.into_scalar();
    assert!((loss - per_graph).abs() < 1e-5, "{loss} vs {per_graph}");
    // A graph without node features is refused when the item is made.
    let bare = GraphsTuple::from_coo(&[0], &[1], 2, &device).unwrap();
    assert!(GraphItem::new(&bare, 0).is_err());
}

/// Link prediction: the Learner's steps over `FullGraphLinkLoader` (fresh negatives each
/// epoch) equal a plain loop over the same pairs, with the loss written out by hand.
#[test]
fn link_prediction_under_the_learner_equals_a_plain_loop() {
    let device = Device::flex().autodiff();
    let full = KarateClub::load().graph(&device).unwrap();
    let (s, r) = full.to_coo();
    let split = RandomLinkSplit::new(0.1, 0.2)
        .with_undirected(true)
        .with_seed(3);
    let split = Arc::new(split.split(&s, &r, 34).unwrap());
    let graph = split.train.message_graph(&full).unwrap();
    let x = full.node_tensor::<2>().unwrap();
    let inner = Device::flex();
    let val_graph = split.val.message_graph(&full.to_device(&inner)).unwrap();
    let train = FullGraphLinkLoader::train(split.clone(), graph.clone(), x.clone()).unwrap();
    let valid = FullGraphLinkLoader::eval(&split.val, val_graph, x.clone().to_device(&inner));
    let model = GcnConfig::new(34, 8, 4).init(&device);
    let result =
        SupervisedTraining::new(scratch("link"), Arc::new(train), Arc::new(valid.unwrap()))
            .metrics((AurocMetric::binary(), LossMetric::new()))
            .num_epochs(4)
            .with_application_logger(None)
            .with_training_strategy(ExecutionStrategy::single(device.clone()).into())
            .launch(Learner::new(
                LinkPrediction::new(model.clone()),
                AdamConfig::new().init(),
                LR,
            ));
    assert!(result.error.is_none());

    let ints =
        |v: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(v.clone(), [v.len()]), &device);
    let mut reference = model;
    let mut optim = AdamConfig::new().init();
    for epoch in 0..4 {
        let (ns, nr) = split.train_negatives(epoch).unwrap();
        let p = split.train.pos_senders.len();
        let senders = [split.train.pos_senders.clone(), ns].concat();
        let receivers = [split.train.pos_receivers.clone(), nr].concat();
        let y: Vec<f32> = (0..senders.len())
            .map(|i| if i < p { 1.0 } else { 0.0 })
            .collect();
        let y = Tensor::<1>::from_data(TensorData::new(y.clone(), [y.len()]), &device);
        let z = reference.forward(x.clone(), &graph);
        let logits = InnerProductDecoder.forward(z, ints(senders), ints(receivers));
        // -[y log σ(l) + (1 - y) log(1 - σ(l))] = log(1 + e^l) - y l for these small logits.
        let loss = (logits.clone().exp().log1p() - y * logits).mean();
        let grads = GradientsParams::from_grads(loss.backward(), &reference);
        reference = optim.step(LR, reference, grads);
    }
    assert_close(
        &params(&result.model.model),
        &params(&reference),
        "link prediction",
    );

    // Items are pairs, positives first; slices split them; a bad x is a typed error.
    let loader = FullGraphLinkLoader::train(split.clone(), graph.clone(), x.clone()).unwrap();
    let n = split.train.pos_senders.len() + split.num_train_negatives();
    assert_eq!(loader.num_items(), n);
    let batch: LinkBatch = loader.iter().next().unwrap().unwrap();
    let targets: Vec<i64> = batch.targets.into_data().iter::<i64>().collect();
    assert_eq!(
        targets.iter().filter(|&&t| t == 1).count(),
        split.train.pos_senders.len()
    );
    let parts: Vec<usize> = [loader.slice(0, n / 2), loader.slice(n / 2, n)]
        .iter()
        .map(|l| l.iter().next().unwrap().unwrap().senders.dims()[0])
        .collect();
    assert_eq!(parts, [n / 2, n - n / 2]);
    let bad = FullGraphLinkLoader::train(split, graph, x.slice([0..10, 0..34]));
    assert!(bad.is_err_and(|e| e.to_string().contains("34 nodes")));
}

/// Sampled link batches: the pairs index the batch's own nodes, whose features are gathered
/// from x; the items are the seed edges and slices split them.
#[test]
fn sampled_link_loader_batches_index_their_subgraph() {
    let (lists, x, _) = block_graph();
    let n = lists.num_nodes();
    let (s, r): (Vec<i64>, Vec<i64>) = lists.edges().take(100).unzip();
    let device = Device::flex();
    let x = Tensor::<2>::from_data(TensorData::new(x, [n, 8]), &device);
    let opts = NegativeSampling::default();
    let links = LinkNeighborLoader::new(lists.clone(), s, r, vec![4, 2], 32, opts).unwrap();
    let loader = SampledLinkLoader::new(links.clone(), x.clone(), &device).unwrap();
    assert_eq!(loader.num_items(), 100);
    let mut positives = 0;
    for (batch, sampled) in loader.iter().zip(links.epoch(0)) {
        let batch: LinkBatch = batch.unwrap();
        assert_eq!(batch.graph.sum_n_node(), sampled.batch.nodes.len());
        let rows = Tensor::<1, Int>::from_data(
            TensorData::new(sampled.batch.nodes.clone(), [sampled.batch.nodes.len()]),
            &device,
        );
        let want: Vec<f32> = x.clone().select(0, rows).into_data().iter().collect();
        let got: Vec<f32> = batch.x.into_data().iter().collect();
        assert_eq!(got, want);
        let senders: Vec<i64> = batch.senders.into_data().iter::<i64>().collect();
        assert_eq!(senders, sampled.senders);
        positives += batch
            .targets
            .into_data()
            .iter::<i64>()
            .filter(|&t| t == 1)
            .count();
    }
    assert_eq!(positives, 100);
    assert_eq!(loader.slice(0, 40).num_items(), 40);
    let bad = SampledLinkLoader::new(links, x.slice([0..10, 0..8]), &device);
    assert!(bad.is_err_and(|e| e.to_string().contains("240 nodes")));
}
