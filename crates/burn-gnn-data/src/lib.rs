//! Datasets and loaders for burn-gnn (in progress; see the project issues).
#![warn(missing_docs)]
