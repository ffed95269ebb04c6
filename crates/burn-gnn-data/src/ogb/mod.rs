//! The Open Graph Benchmark's formats and evaluators (`ogb` 1.3.6): dataset descriptions
//! ([`OgbInfo`], from OGB's `master.csv`), the raw on-disk layouts of homogeneous node and graph
//! datasets ([`OgbNodeDataset`], [`OgbGraphDataset`]: CSV.gz tables or NumPy `.npz`, split
//! schemes) and of heterogeneous node datasets ([`OgbHeteroNodeDataset`]), and the evaluators with OGB's semantics and input checks ([`Evaluator`]: accuracy,
//! ROC-AUC, AP, RMSE, MRR, Hits@K, sub-token F1).
//!
//! Heterogeneous node datasets (`ogbn-mag`) read as [`OgbHeteroNodeDataset`].
//!
//! Link datasets ([`OgbLinkDataset`]) with their split files (`split/<scheme>/*.pt`, PyTorch's
//! format, read with Burn's `pytorch-reader`).
//!
//! Not read yet: heterogeneous link datasets (`ogbl-biokg`), the binary heterogeneous layout, `ogbg-code2`'s sub-token labels, and downloading (point the
//! loaders at the unpacked zip).

mod evaluate;
mod hetero;
mod info;
mod link;
mod read;

pub use evaluate::{
    Evaluator, Ranking, SubtokenScores, accuracy, average_precision, hits_at_k, ranking, rmse,
    roc_auc, subtoken_f1,
};
pub use hetero::OgbHeteroNodeDataset;
pub use info::{OgbInfo, OgbLevel, OgbMetric};
pub use link::{OgbLinkDataset, OgbLinkPart, OgbLinkSplit};
pub use read::{OgbGraphDataset, OgbNodeDataset, OgbSplit};
