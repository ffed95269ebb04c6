//! [`Feature`]: a Burn tensor of any supported rank and kind, and [`FeatureSet`]: the unnamed
//! feature plus named extras of one set (nodes, edges or globals).

use std::collections::BTreeMap;

use burn::tensor::kind::Basic;
use burn::tensor::{Bool, DType, Device, Float, Int, Tensor, TensorData};
use burn_segment::{SegmentKind, segment_max, segment_mean, segment_min, segment_sum};

use crate::GraphError;
use crate::compat::gather_rows;

/// One feature tensor; its leading dimension (dim 0) indexes nodes, edges or graphs.
///
/// Float tensors of rank 1 to 5 and Int tensors of rank 1 to 3. Build one with `.into()` from a
/// `Tensor`, read it back with [`Feature::float`] / [`Feature::int`].
#[derive(Clone, Debug)]
#[allow(missing_docs)] // the variants are named by kind and rank
pub enum Feature {
    Float1(Tensor<1>),
    Float2(Tensor<2>),
    Float3(Tensor<3>),
    Float4(Tensor<4>),
    Float5(Tensor<5>),
    Int1(Tensor<1, Int>),
    Int2(Tensor<2, Int>),
    Int3(Tensor<3, Int>),
}

/// Applies `$body` to the tensor inside any variant, keeping the variant.
macro_rules! map_feature {
    ($f:expr, $t:ident => $body:expr) => {
        match $f {
            Feature::Float1($t) => Feature::Float1($body),
            Feature::Float2($t) => Feature::Float2($body),
            Feature::Float3($t) => Feature::Float3($body),
            Feature::Float4($t) => Feature::Float4($body),
            Feature::Float5($t) => Feature::Float5($body),
            Feature::Int1($t) => Feature::Int1($body),
            Feature::Int2($t) => Feature::Int2($body),
            Feature::Int3($t) => Feature::Int3($body),
        }
    };
}

/// Evaluates `$body` on the tensor inside any variant.
macro_rules! with_feature {
    ($f:expr, $t:ident => $body:expr) => {
        match $f {
            Feature::Float1($t) => $body,
            Feature::Float2($t) => $body,
            Feature::Float3($t) => $body,
            Feature::Float4($t) => $body,
            Feature::Float5($t) => $body,
            Feature::Int1($t) => $body,
            Feature::Int2($t) => $body,
            Feature::Int3($t) => $body,
        }
    };
}

macro_rules! feature_from {
    ($($variant:ident: $d:literal, $k:ty;)*) => {$(
        impl From<Tensor<$d, $k>> for Feature {
            fn from(t: Tensor<$d, $k>) -> Self {
                Feature::$variant(t)
            }
        }
    )*};
}
feature_from! {
    Float1: 1, Float; Float2: 2, Float; Float3: 3, Float; Float4: 4, Float; Float5: 5, Float;
    Int1: 1, Int; Int2: 2, Int; Int3: 3, Int;
}

/// How duplicate edges' features are merged by [`coalesce`](crate::GraphsTuple::coalesce).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EdgeReduce {
    /// Sum of the duplicates (PyG's default).
    #[default]
    Sum,
    /// Mean of the duplicates.
    Mean,
    /// Column-wise maximum.
    Max,
    /// Column-wise minimum.
    Min,
}

fn reduce<const D: usize, K: SegmentKind>(
    t: Tensor<D, K>,
    ids: Tensor<1, Int>,
    n: usize,
    how: EdgeReduce,
) -> Tensor<D, K> {
    match how {
        EdgeReduce::Sum => segment_sum(t, ids, n),
        EdgeReduce::Max => segment_max(t, ids, n),
        EdgeReduce::Min => segment_min(t, ids, n),
        EdgeReduce::Mean => unreachable!("mean is float-only and handled by the caller"),
    }
}

fn zero_rows_t<const D: usize, K: Basic>(t: Tensor<D, K>, keep: Tensor<1, Bool>) -> Tensor<D, K> {
    let dims = t.dims();
    let mut shape = [1usize; D];
    shape[0] = dims[0];
    let drop = keep.bool_not().reshape(shape).expand(dims);
    t.mask_fill(drop, 0)
}

impl Feature {
    /// The tensor's shape.
    pub fn dims(&self) -> Vec<usize> {
        with_feature!(self, t => t.dims().to_vec())
    }

    /// Its leading dimension: the number of nodes, edges or graphs it describes.
    pub fn rows(&self) -> usize {
        with_feature!(self, t => t.dims()[0])
    }

    /// The tensor's rank.
    pub fn rank(&self) -> usize {
        with_feature!(self, t => t.dims().len())
    }

    /// Whether it holds floats (otherwise ints).
    pub fn is_float(&self) -> bool {
        matches!(
            self,
            Feature::Float1(_)
                | Feature::Float2(_)
                | Feature::Float3(_)
                | Feature::Float4(_)
                | Feature::Float5(_)
        )
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        with_feature!(self, t => t.dtype())
    }

    /// The device it lives on.
    pub fn device(&self) -> Device {
        with_feature!(self, t => t.device())
    }

    /// The float tensor, if this is a float feature of rank `D`.
    pub fn float<const D: usize>(&self) -> Option<Tensor<D>> {
        (self.is_float() && self.rank() == D).then(
            || with_feature!(self.clone(), t => Tensor::<D>::from_dispatch(t.into_dispatch())),
        )
    }

    /// The int tensor, if this is an int feature of rank `D`.
    pub fn int<const D: usize>(&self) -> Option<Tensor<D, Int>> {
        (!self.is_float() && self.rank() == D).then(
            || with_feature!(self.clone(), t => Tensor::<D, Int>::from_dispatch(t.into_dispatch())),
        )
    }

    /// Its values, shape and dtype on the host.
    pub fn to_data(&self) -> TensorData {
        with_feature!(self, t => t.to_data())
    }

    /// Rebuilds a feature from host data (float or int dtype, rank 1 to 5 / 1 to 3).
    pub fn from_data(data: TensorData, device: &Device) -> Result<Feature, GraphError> {
        let dtype = data.dtype();
        let rank = data.shape().len();
        let opts = (device, dtype);
        Ok(match (dtype.is_float(), rank) {
            (true, 1) => Feature::Float1(Tensor::from_data(data, opts)),
            (true, 2) => Feature::Float2(Tensor::from_data(data, opts)),
            (true, 3) => Feature::Float3(Tensor::from_data(data, opts)),
            (true, 4) => Feature::Float4(Tensor::from_data(data, opts)),
            (true, 5) => Feature::Float5(Tensor::from_data(data, opts)),
            (false, 1) if dtype.is_int() => Feature::Int1(Tensor::from_data(data, opts)),
            (false, 2) if dtype.is_int() => Feature::Int2(Tensor::from_data(data, opts)),
            (false, 3) if dtype.is_int() => Feature::Int3(Tensor::from_data(data, opts)),
            _ => {
                return Err(GraphError::UnsupportedFeature(format!(
                    "dtype {dtype:?} of rank {rank} (supported: float rank 1-5, int rank 1-3)"
                )));
            }
        })
    }

    /// The rows at `indices` (dim 0).
    pub fn select_rows(self, indices: Tensor<1, Int>) -> Feature {
        map_feature!(self, t => gather_rows(t, indices.clone()))
    }

    /// Rows `start..end` (dim 0); an empty range gives an empty feature.
    pub fn slice_rows(self, start: usize, end: usize) -> Feature {
        map_feature!(self, t => t.slice(start..end))
    }

    /// Appends `n` rows of zeros.
    pub fn pad_rows(self, n: usize) -> Feature {
        if n == 0 {
            return self;
        }
        map_feature!(self, t => {
            let mut dims = t.dims();
            dims[0] = n;
            let zeros = Tensor::zeros(dims, (&t.device(), t.dtype()));
            Tensor::cat(vec![t, zeros], 0)
        })
    }

    /// The same feature on `device`.
    pub fn to_device(self, device: &Device) -> Feature {
        map_feature!(self, t => t.to_device(device))
    }

    /// Adds `x` to every entry (rounded towards zero for int features).
    pub fn add_scalar(self, x: f64) -> Feature {
        map_feature!(self, t => t.add_scalar(x))
    }

    /// Sets the rows where `keep` is false to zero (`NaN` rows too: this selects, never
    /// multiplies). `keep` has one entry per row.
    pub fn zero_rows(self, keep: Tensor<1, Bool>) -> Feature {
        if self.rows() == 0 {
            return self;
        }
        map_feature!(self, t => zero_rows_t(t, keep.clone()))
    }

    /// Merges rows that share a segment id (`[n, ...]` out). Int features cannot be averaged:
    /// [`EdgeReduce::Mean`] on an int feature is an error.
    pub fn reduce_rows(
        self,
        ids: Tensor<1, Int>,
        n: usize,
        how: EdgeReduce,
    ) -> Result<Feature, GraphError> {
        if self.rows() == 0 && (n == 0 || matches!(how, EdgeReduce::Sum | EdgeReduce::Mean)) {
            // Nothing to merge: zeros (the sum and mean of nothing), without a scatter on an
            // empty index (see `gather_rows`).
            return Ok(self.pad_rows(n));
        }
        if how == EdgeReduce::Mean {
            return match self {
                Feature::Float1(t) => Ok(Feature::Float1(segment_mean(t, ids, n))),
                Feature::Float2(t) => Ok(Feature::Float2(segment_mean(t, ids, n))),
                Feature::Float3(t) => Ok(Feature::Float3(segment_mean(t, ids, n))),
                Feature::Float4(t) => Ok(Feature::Float4(segment_mean(t, ids, n))),
                Feature::Float5(t) => Ok(Feature::Float5(segment_mean(t, ids, n))),
                _ => Err(GraphError::InvalidArgument(
                    "EdgeReduce::Mean needs float edge features".into(),
                )),
            };
        }
        Ok(map_feature!(self, t => reduce(t, ids.clone(), n, how)))
    }

    /// Concatenates features of the same kind, rank and trailing shape along dim 0.
    pub fn cat(features: Vec<Feature>) -> Result<Feature, String> {
        let first = features.first().ok_or("no features to concatenate")?;
        let (kind, tail) = (std::mem::discriminant(first), first.dims()[1..].to_vec());
        for f in &features {
            if std::mem::discriminant(f) != kind || f.dims()[1..] != tail[..] {
                return Err(format!(
                    "shapes {:?} and {:?} (or kinds) differ",
                    first.dims(),
                    f.dims()
                ));
            }
        }
        macro_rules! cat_as {
            ($variant:ident) => {
                Feature::$variant(Tensor::cat(
                    features
                        .into_iter()
                        .map(|f| match f {
                            Feature::$variant(t) => t,
                            _ => unreachable!("kinds checked above"),
                        })
                        .collect(),
                    0,
                ))
            };
        }
        Ok(match first {
            Feature::Float1(_) => cat_as!(Float1),
            Feature::Float2(_) => cat_as!(Float2),
            Feature::Float3(_) => cat_as!(Float3),
            Feature::Float4(_) => cat_as!(Float4),
            Feature::Float5(_) => cat_as!(Float5),
            Feature::Int1(_) => cat_as!(Int1),
            Feature::Int2(_) => cat_as!(Int2),
            Feature::Int3(_) => cat_as!(Int3),
        })
    }
}

/// The features of one set (nodes, edges or globals): an optional unnamed feature (jraph's
/// `nodes` / `edges` / `globals`) plus any number of named ones, all with the same leading
/// dimension.
#[derive(Clone, Debug, Default)]
pub struct FeatureSet {
    /// The unnamed feature.
    pub main: Option<Feature>,
    /// Named extra features (`"pos"`, `"label"`, ...), in name order.
    pub named: BTreeMap<String, Feature>,
}

/// The name [`GraphError`] messages use for the unnamed feature.
pub(crate) const MAIN: &str = "main";

impl FeatureSet {
    /// The sets' features concatenated along dim 0 (batching). Features all sets carry are
    /// joined; the caller checks first that the sets share one schema.
    ///
    /// # Errors
    /// A message from [`Feature::cat`] when kinds, dtypes or trailing shapes differ.
    pub(crate) fn cat(sets: &[&FeatureSet]) -> Result<FeatureSet, String> {
        let cat =
            |pick: &dyn Fn(&FeatureSet) -> Option<Feature>| -> Result<Option<Feature>, String> {
                let parts: Option<Vec<Feature>> = sets.iter().map(|s| pick(s)).collect();
                parts.map(Feature::cat).transpose()
            };
        let mut out = FeatureSet {
            main: cat(&|s| s.main.clone())?,
            ..Default::default()
        };
        for name in sets
            .first()
            .map(|s| s.named.keys().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            if let Some(f) = cat(&|s| s.named.get(name).cloned())? {
                out.named.insert(name.clone(), f);
            }
        }
        Ok(out)
    }

    /// Every feature with its name (`"main"` for the unnamed one).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Feature)> {
        self.main
            .iter()
            .map(|f| (MAIN, f))
            .chain(self.named.iter().map(|(k, v)| (k.as_str(), v)))
    }

    /// Whether the set holds no feature.
    pub fn is_empty(&self) -> bool {
        self.main.is_none() && self.named.is_empty()
    }

    /// Applies `f` to every feature.
    pub fn map(self, mut f: impl FnMut(Feature) -> Feature) -> FeatureSet {
        FeatureSet {
            main: self.main.map(&mut f),
            named: self.named.into_iter().map(|(k, v)| (k, f(v))).collect(),
        }
    }

    /// Applies a fallible `f` to every feature.
    pub fn try_map(
        self,
        mut f: impl FnMut(Feature) -> Result<Feature, GraphError>,
    ) -> Result<FeatureSet, GraphError> {
        Ok(FeatureSet {
            main: self.main.map(&mut f).transpose()?,
            named: self
                .named
                .into_iter()
                .map(|(k, v)| Ok((k, f(v)?)))
                .collect::<Result<_, GraphError>>()?,
        })
    }

    /// A description of the names, kinds and trailing shapes, to compare sets before batching.
    pub(crate) fn schema(&self) -> Vec<(String, bool, Vec<usize>, DType)> {
        self.iter()
            .map(|(k, f)| {
                (
                    k.to_string(),
                    f.is_float(),
                    f.dims()[1..].to_vec(),
                    f.dtype(),
                )
            })
            .collect()
    }
}
