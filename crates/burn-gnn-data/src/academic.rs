//! [`Academic`]: a generated heterogeneous citation graph with a planted signal.

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_graph::{EdgeType, HeteroGraph};

use crate::DataError;
use crate::synthetic::SplitMix64;

/// Sizes and signal strengths of [`Academic::generate`]. The defaults give a graph where a
/// paper's own features predict its topic poorly and its venue and authors predict it well.
#[derive(Clone, Debug, PartialEq)]
pub struct AcademicConfig {
    /// Papers (the labelled node type).
    pub papers: usize,
    /// Authors.
    pub authors: usize,
    /// Venues.
    pub venues: usize,
    /// Topics: the classes.
    pub topics: usize,
    /// Features per node, every type.
    pub features: usize,
    /// Probability that a paper's venue, each of its authors and each of its citations share
    /// its topic (the rest are drawn uniformly).
    pub homophily: f64,
    /// Norm of the topic's mean vector in a paper's features (noise has unit variance per
    /// feature): the signal a graph-blind model can use.
    pub feature_signal: f64,
    /// The seed: the same configuration gives the same graph.
    pub seed: u64,
}

impl Default for AcademicConfig {
    fn default() -> Self {
        AcademicConfig {
            papers: 3000,
            authors: 1200,
            venues: 24,
            topics: 4,
            features: 32,
            homophily: 0.75,
            feature_signal: 1.0,
            seed: 0,
        }
    }
}

/// A generated academic graph: papers with a topic each, authors with a preferred topic,
/// venues with a topic; relations `writes`/`written_by` (author ⇄ paper),
/// `published_in`/`publishes` (paper ⇄ venue) and `cites`/`cited_by` (paper ⇄ paper). Node
/// features are Gaussian noise, plus a weak topic signal for papers only: a paper's topic shows
/// mostly through its venue and authors (two hops: paper → venue → its other papers).
///
/// Papers are split 20 % / 20 % / 60 % into train / validation / test.
#[derive(Clone, Debug)]
pub struct Academic {
    /// What generated it.
    pub config: AcademicConfig,
    /// Topic of each paper.
    pub labels: Vec<i64>,
    /// Training papers.
    pub train_mask: Vec<bool>,
    /// Validation papers.
    pub val_mask: Vec<bool>,
    /// Test papers.
    pub test_mask: Vec<bool>,
    /// Features by node type, row-major `[n, features]`.
    pub features: Vec<(String, Vec<f32>)>,
    /// Edges by type: `(edge type, senders, receivers)`.
    pub edges: Vec<(EdgeType, Vec<i64>, Vec<i64>)>,
}

impl Academic {
    /// Generates the graph.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for zero papers, authors, venues, topics or features,
    /// fewer venues than topics, or a probability outside `[0, 1]`.
    pub fn generate(config: AcademicConfig) -> Result<Academic, DataError> {
        let c = &config;
        if [c.papers, c.authors, c.venues, c.topics, c.features].contains(&0) || c.venues < c.topics
        {
            return Err(DataError::InvalidArgument(format!(
                "academic graph: every size must be positive and venues ≥ topics, got {c:?}"
            )));
        }
        if !(0.0..=1.0).contains(&c.homophily) || !c.feature_signal.is_finite() {
            return Err(DataError::InvalidArgument(format!(
                "academic graph: homophily {} outside [0, 1]",
                c.homophily
            )));
        }
        let mut rng = SplitMix64::new(c.seed);
        let k = c.topics as u64;
        let labels: Vec<i64> = (0..c.papers).map(|_| rng.below(k) as i64).collect();
        let author_topic: Vec<i64> = (0..c.authors).map(|_| rng.below(k) as i64).collect();
        let venue_topic: Vec<i64> = (0..c.venues).map(|v| (v % c.topics) as i64).collect();
        let by_topic = |topics: &[i64]| -> Vec<Vec<i64>> {
            let mut out = vec![vec![]; c.topics];
            for (i, &t) in topics.iter().enumerate() {
                out[t as usize].push(i as i64);
            }
            out
        };
        let (authors_of, venues_of, papers_of) = (
            by_topic(&author_topic),
            by_topic(&venue_topic),
            by_topic(&labels),
        );
        // Picks from `pool[topic]` with probability `homophily`, else uniformly from `0..n`.
        let pick = |rng: &mut SplitMix64, pool: &[Vec<i64>], topic: i64, n: usize| -> i64 {
            let same = &pool[topic as usize];
            if !same.is_empty() && rng.next_f64() < c.homophily {
                same[rng.below(same.len() as u64) as usize]
            } else {
                rng.below(n as u64) as i64
            }
        };
        let (mut writes, mut published, mut cites) =
            ((vec![], vec![]), (vec![], vec![]), (vec![], vec![]));
        for (p, &t) in labels.iter().enumerate() {
            let p = p as i64;
            let v = pick(&mut rng, &venues_of, t, c.venues);
            published.0.push(p);
            published.1.push(v);
            let mut mine: Vec<i64> = (0..1 + rng.below(3))
                .map(|_| pick(&mut rng, &authors_of, t, c.authors))
                .collect();
            mine.sort_unstable();
            mine.dedup();
            for a in mine {
                writes.0.push(a);
                writes.1.push(p);
            }
            let mut cited: Vec<i64> = (0..rng.below(5))
                .map(|_| pick(&mut rng, &papers_of, t, c.papers))
                .filter(|&q| q != p)
                .collect();
            cited.sort_unstable();
            cited.dedup();
            for q in cited {
                cites.0.push(p);
                cites.1.push(q);
            }
        }
        // Features: unit Gaussian noise; papers add `feature_signal` along their topic's mean.
        let means: Vec<Vec<f64>> = (0..c.topics)
            .map(|_| {
                let v: Vec<f64> = (0..c.features).map(|_| rng.normal()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
                v.into_iter().map(|x| x * c.feature_signal / norm).collect()
            })
            .collect();
        let noise = |n: usize, rng: &mut SplitMix64| {
            (0..n * c.features)
                .map(|_| rng.normal() as f32)
                .collect::<Vec<f32>>()
        };
        let mut paper_x = noise(c.papers, &mut rng);
        for (p, &t) in labels.iter().enumerate() {
            for (j, m) in means[t as usize].iter().enumerate() {
                paper_x[p * c.features + j] += *m as f32;
            }
        }
        let features = vec![
            ("author".to_string(), noise(c.authors, &mut rng)),
            ("paper".to_string(), paper_x),
            ("venue".to_string(), noise(c.venues, &mut rng)),
        ];
        let mut order: Vec<usize> = (0..c.papers).collect();
        rng.shuffle(&mut order);
        let (n_train, n_val) = (c.papers / 5, c.papers / 5);
        let mut masks = [
            vec![false; c.papers],
            vec![false; c.papers],
            vec![false; c.papers],
        ];
        for (i, &p) in order.iter().enumerate() {
            masks[if i < n_train {
                0
            } else if i < n_train + n_val {
                1
            } else {
                2
            }][p] = true;
        }
        let [train_mask, val_mask, test_mask] = masks;
        let rev = |(s, r): &(Vec<i64>, Vec<i64>)| (r.clone(), s.clone());
        let edges = vec![
            (
                EdgeType::new("author", "writes", "paper"),
                writes.0.clone(),
                writes.1.clone(),
            ),
            (
                EdgeType::new("paper", "written_by", "author"),
                rev(&writes).0,
                rev(&writes).1,
            ),
            (
                EdgeType::new("paper", "published_in", "venue"),
                published.0.clone(),
                published.1.clone(),
            ),
            (
                EdgeType::new("venue", "publishes", "paper"),
                rev(&published).0,
                rev(&published).1,
            ),
            (
                EdgeType::new("paper", "cites", "paper"),
                cites.0.clone(),
                cites.1.clone(),
            ),
            (
                EdgeType::new("paper", "cited_by", "paper"),
                rev(&cites).0,
                rev(&cites).1,
            ),
        ];
        Ok(Academic {
            config,
            labels,
            train_mask,
            val_mask,
            test_mask,
            features,
            edges,
        })
    }

    /// The graph on `device`, node features as each type's main features.
    ///
    /// # Errors
    /// Only if the generated graph fails validation (a bug).
    pub fn graph(&self, device: &Device) -> Result<HeteroGraph, DataError> {
        let d = self.config.features;
        let mut b = HeteroGraph::builder(device);
        for (t, x) in &self.features {
            let n = x.len() / d;
            b = b.node_features(
                t.clone(),
                Tensor::<2>::from_data(TensorData::new(x.clone(), [n, d]), device),
            );
        }
        for (et, s, r) in &self.edges {
            b = b.edge_list(et.clone(), s, r);
        }
        Ok(b.build()?)
    }

    /// Paper topics `[papers]` on `device`.
    pub fn labels(&self, device: &Device) -> Tensor<1, Int> {
        Tensor::from_data(
            TensorData::new(self.labels.clone(), [self.labels.len()]),
            device,
        )
    }
}
