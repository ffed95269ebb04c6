//! What OGB knows about each dataset: its `master.csv` rows (copied from `ogb` 1.3.6, MIT
//! licence), parsed into [`OgbInfo`].

use crate::DataError;

const MASTER_NODE: &str = include_str!("master_node.csv");
const MASTER_LINK: &str = include_str!("master_link.csv");
const MASTER_GRAPH: &str = include_str!("master_graph.csv");

/// What an OGB dataset predicts: node, link or graph properties (`ogbn-*`, `ogbl-*`, `ogbg-*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OgbLevel {
    /// Node property prediction, `ogbn-*`.
    Node,
    /// Link property prediction, `ogbl-*`.
    Link,
    /// Graph property prediction, `ogbg-*`.
    Graph,
}

/// An OGB evaluation metric, with OGB's semantics (see [`super::Evaluator`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OgbMetric {
    /// Accuracy averaged over tasks (`acc`).
    Accuracy,
    /// ROC-AUC averaged over tasks with both classes (`rocauc`).
    RocAuc,
    /// Average precision averaged over tasks with both classes (`ap`).
    AveragePrecision,
    /// Root mean squared error averaged over tasks (`rmse`).
    Rmse,
    /// Mean reciprocal rank of each positive among its own negatives (`mrr`).
    Mrr,
    /// The fraction of positives scored above the K-th best negative (`hits@K`).
    HitsAt(usize),
    /// F1 of predicted sub-token sets (`F1`, `ogbg-code2`).
    F1,
}

impl OgbMetric {
    /// OGB's name for the metric: `acc`, `rocauc`, `ap`, `rmse`, `mrr`, `hits@K`, `F1`.
    pub fn name(&self) -> String {
        match self {
            OgbMetric::Accuracy => "acc".into(),
            OgbMetric::RocAuc => "rocauc".into(),
            OgbMetric::AveragePrecision => "ap".into(),
            OgbMetric::Rmse => "rmse".into(),
            OgbMetric::Mrr => "mrr".into(),
            OgbMetric::HitsAt(k) => format!("hits@{k}"),
            OgbMetric::F1 => "F1".into(),
        }
    }

    /// The metric OGB names `name`.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a name OGB does not use.
    pub fn from_name(name: &str) -> Result<OgbMetric, DataError> {
        Ok(match name {
            "acc" => OgbMetric::Accuracy,
            "rocauc" => OgbMetric::RocAuc,
            "ap" => OgbMetric::AveragePrecision,
            "rmse" => OgbMetric::Rmse,
            "mrr" => OgbMetric::Mrr,
            "F1" => OgbMetric::F1,
            _ => match name.strip_prefix("hits@").map(str::parse::<usize>) {
                Some(Ok(k)) if k > 0 => OgbMetric::HitsAt(k),
                _ => {
                    return Err(DataError::InvalidArgument(format!(
                        "`{name}` is not an OGB metric (acc, rocauc, ap, rmse, mrr, hits@K, F1)"
                    )));
                }
            },
        })
    }

    /// Whether a larger value is better (all but RMSE).
    pub fn higher_is_better(&self) -> bool {
        !matches!(self, OgbMetric::Rmse)
    }
}

/// One OGB dataset's description, as OGB's `master.csv` gives it ([`OgbInfo::get`]) or as a
/// user fills it in for a dataset of their own in OGB's layout (OGB's `meta_dict`).
#[derive(Clone, Debug, PartialEq)]
pub struct OgbInfo {
    /// The dataset's name, e.g. `ogbn-arxiv`.
    pub name: String,
    /// Node, link or graph prediction.
    pub level: OgbLevel,
    /// The number of prediction tasks (label columns).
    pub num_tasks: usize,
    /// The number of classes of a classification task (`None` for regression and link
    /// prediction).
    pub num_classes: Option<usize>,
    /// OGB's task type, e.g. `multiclass classification`.
    pub task_type: String,
    /// The metric its evaluator reports.
    pub metric: OgbMetric,
    /// The folder the download unpacks to, e.g. `arxiv`.
    pub download_name: String,
    /// The dataset's version (OGB writes `RELEASE_v<version>.txt` beside the data).
    pub version: u32,
    /// Where OGB downloads it from.
    pub url: String,
    /// Whether each listed edge is followed by its reverse when read (OGB's
    /// `add_inverse_edge`).
    pub add_inverse_edge: bool,
    /// The default split scheme: the folder under `split/`.
    pub split: String,
    /// Extra node tables (`raw/<name>.csv.gz`, e.g. `node_year`), read as named node features.
    pub additional_node_files: Vec<String>,
    /// Extra edge tables (e.g. `edge_weight`), read as named edge features.
    pub additional_edge_files: Vec<String>,
    /// Whether the graph is heterogeneous (`ogbn-mag`, `ogbl-biokg`).
    pub hetero: bool,
    /// Whether the raw files are NumPy archives (`data.npz`) instead of CSV tables.
    pub binary: bool,
}

impl OgbInfo {
    /// The description OGB's `master.csv` gives the dataset `name` (e.g. `ogbn-arxiv`,
    /// `ogbl-collab`, `ogbg-molhiv`).
    ///
    /// # Errors
    /// [`DataError::UnknownDataset`] for a name OGB does not list.
    pub fn get(name: &str) -> Result<OgbInfo, DataError> {
        let level = match name.get(..5) {
            Some("ogbn-") => OgbLevel::Node,
            Some("ogbl-") => OgbLevel::Link,
            Some("ogbg-") => OgbLevel::Graph,
            _ => return Err(unknown(name)),
        };
        let master = match level {
            OgbLevel::Node => MASTER_NODE,
            OgbLevel::Link => MASTER_LINK,
            OgbLevel::Graph => MASTER_GRAPH,
        };
        let rows = parse_master(master);
        let column = rows[0]
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| unknown(name))?;
        let field = |key: &str| -> &str {
            rows.iter()
                .find(|r| r[0] == key)
                .map_or("", |r| r[column].as_str())
        };
        let list = |key: &str| -> Vec<String> {
            match field(key) {
                "None" | "" => Vec::new(),
                v => v.split(',').map(str::to_string).collect(),
            }
        };
        let classes: i64 = field("num classes").parse().unwrap_or(-1);
        Ok(OgbInfo {
            name: name.to_string(),
            level,
            // The link table has no row for it: one task, as its evaluators assume.
            num_tasks: field("num tasks").parse().unwrap_or(1),
            num_classes: (classes > 0).then_some(classes as usize),
            task_type: field("task type").to_string(),
            metric: OgbMetric::from_name(field("eval metric")).expect("master.csv: eval metric"),
            download_name: field("download_name").to_string(),
            version: field("version").parse().expect("master.csv: version"),
            url: field("url").to_string(),
            add_inverse_edge: field("add_inverse_edge") == "True",
            split: field("split").to_string(),
            additional_node_files: list("additional node files"),
            additional_edge_files: list("additional edge files"),
            hetero: field("is hetero") == "True",
            binary: field("binary") == "True",
        })
    }

    /// Every dataset name OGB's `master.csv` lists, node, link then graph datasets.
    pub fn names() -> Vec<String> {
        [MASTER_NODE, MASTER_LINK, MASTER_GRAPH]
            .iter()
            .flat_map(|m| parse_master(m).swap_remove(0).into_iter().skip(1))
            .collect()
    }

    /// The folder OGB keeps the dataset in under its root: the name with `-` as `_`
    /// (`ogbn_arxiv`).
    pub fn dir_name(&self) -> String {
        self.name.replace('-', "_")
    }
}

fn unknown(name: &str) -> DataError {
    DataError::UnknownDataset {
        name: name.to_string(),
        known: OgbInfo::names().join(", "),
    }
}

/// The rows of a `master.csv`: the first is the header (`""`, dataset names…).
fn parse_master(text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| {
            r.expect("master.csv is well formed")
                .iter()
                .map(str::to_string)
                .collect()
        })
        .collect()
}
