//! The Open Graph Benchmark's formats and evaluators (`ogb` 1.3.6): dataset descriptions
//! ([`OgbInfo`], from OGB's `master.csv`), the raw on-disk layouts of homogeneous node and graph
//! datasets ([`OgbNodeDataset`], [`OgbGraphDataset`]: CSV.gz tables or NumPy `.npz`, split
//! schemes) and of heterogeneous node datasets ([`OgbHeteroNodeDataset`]), and the evaluators with OGB's semantics and input checks ([`Evaluator`]: accuracy,
//! ROC-AUC, AP, RMSE, MRR, Hits@K, sub-token F1).
//!
//! Heterogeneous node datasets (`ogbn-mag`) read as [`OgbHeteroNodeDataset`].
//!
//! Not read yet: the link datasets' split files (`split/<scheme>/*.pt`, PyTorch's format), the
//! binary heterogeneous layout, `ogbg-code2`'s sub-token labels, and downloading (point the
//! loaders at the unpacked zip).

mod evaluate;
mod hetero;
mod info;
mod read;

pub use evaluate::{
    Evaluator, Ranking, SubtokenScores, accuracy, average_precision, hits_at_k, ranking, rmse,
    roc_auc, subtoken_f1,
};
pub use hetero::OgbHeteroNodeDataset;
pub use info::{OgbInfo, OgbLevel, OgbMetric};
pub use read::{OgbGraphDataset, OgbNodeDataset, OgbSplit};
