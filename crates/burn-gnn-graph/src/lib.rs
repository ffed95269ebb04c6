//! Graph containers for burn-gnn: GraphsTuple, batching, padding (in progress; see the project issues).
#![warn(missing_docs)]
