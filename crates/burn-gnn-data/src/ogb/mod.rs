//! The Open Graph Benchmark's formats and evaluators (`ogb` 1.3.6):
//!
//! - [`OgbInfo`]: each dataset's description, from OGB's own `master.csv`;
//! - the raw on-disk layouts: homogeneous node and graph datasets ([`OgbNodeDataset`],
//!   [`OgbGraphDataset`]: CSV.gz tables or NumPy `.npz`, split schemes), heterogeneous node
//!   datasets ([`OgbHeteroNodeDataset`], `ogbn-mag`) and link datasets ([`OgbLinkDataset`],
//!   their `split/<scheme>/*.pt` files read with Burn's `pytorch-reader`);
//! - [`Evaluator`]: the metrics with OGB's semantics and input checks (accuracy, ROC-AUC, AP,
//!   RMSE, MRR, Hits@K, sub-token F1).
//!
//! `download_ogb` (feature `download`) fetches and unpacks a dataset's zip. Not read yet:
//! heterogeneous link datasets (`ogbl-biokg`), the binary heterogeneous layout, and
//! `ogbg-code2`'s sub-token labels.

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
