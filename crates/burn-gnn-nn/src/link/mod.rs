//! Link prediction: graph autoencoders (GAE, VGAE), the inner-product decoder, their losses,
//! and the ranking metrics (ROC AUC, average precision).

mod autoencoder;
mod metrics;

pub use autoencoder::{
    Gae, InnerProductDecoder, MAX_LOGSTD, Pairs, Vgae, VgaeEmbedding, bce_with_logits, kl_loss,
    recon_loss,
};
pub use metrics::{average_precision, roc_auc};
