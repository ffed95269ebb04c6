//! Link prediction data: negative sampling and train / validation / test edge splits.

mod negative;
mod split;

pub use negative::{
    NegativeMethod, NegativeSampler, NegativeSampling, Structured, negative_sampling,
    structured_negative_sampling,
};
pub use split::{LinkSet, LinkSplit, RandomLinkSplit};
