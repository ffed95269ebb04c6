//! Training curves as SVG (plotters): training and validation loss on the left, validation and
//! test accuracy on the right, one line per seed and series.

use plotters::prelude::*;

use super::record::EpochRow;

/// A named series: its legend, colour and how to read it from a row.
type Series = (&'static str, RGBColor, fn(&EpochRow) -> f64);

const LOSSES: [Series; 2] = [
    ("train loss", RGBColor(31, 119, 180), |r| r.train_loss),
    ("val loss", RGBColor(255, 127, 14), |r| r.val_loss),
];
const ACCURACIES: [Series; 2] = [
    ("val acc", RGBColor(44, 160, 44), |r| r.val_acc),
    ("test acc", RGBColor(214, 39, 40), |r| r.test_acc),
];

/// The value range of `series` over `rows`, widened when flat.
fn range(rows: &[EpochRow], series: &[Series]) -> (f64, f64) {
    let (lo, hi) = rows
        .iter()
        .flat_map(|r| series.iter().map(move |(_, _, f)| f(r)))
        .filter(|v| v.is_finite())
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        (0.0, 1.0)
    } else if hi - lo < 1e-9 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    }
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    rows: &[EpochRow],
    series: &[Series],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let max_epoch = rows.iter().map(|r| r.epoch).max().unwrap_or(1).max(2);
    let (lo, hi) = range(rows, series);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(1..max_epoch, lo..hi)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_label_formatter(&|v| format!("{v:.2}"))
        .draw()?;
    let mut seeds: Vec<u64> = rows.iter().map(|r| r.seed).collect();
    seeds.dedup();
    for &(name, color, value) in series {
        for (i, &seed) in seeds.iter().enumerate() {
            let points = rows
                .iter()
                .filter(|r| r.seed == seed)
                .map(|r| (r.epoch, value(r)));
            let line = chart.draw_series(LineSeries::new(points, color.stroke_width(1)))?;
            if i == 0 {
                line.label(name).legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2))
                });
            }
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
}

/// The curves of `rows` under `title`, as an SVG document.
pub fn curves_svg(title: &str, rows: &[EpochRow]) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 360)).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .and_then(|_| root.titled(title, ("sans-serif", 18)))
            .and_then(|body| {
                let [left, right] = <[_; 2]>::try_from(body.split_evenly((1, 2)))
                    .unwrap_or_else(|_| unreachable!("two panels"));
                panel(&left, "loss", rows, &LOSSES)?;
                panel(&right, "accuracy", rows, &ACCURACIES)
            })
            .and_then(|_| root.present());
        drawn.expect("drawing into a string cannot fail");
    }
    svg
}
