//! Message-passing layers for burn-gnn (in progress; see the project issues).
#![warn(missing_docs)]
