//! Training curves as SVG (plotters): two panels (e.g. losses on the left, accuracies on the
//! right), one line per seed and series.

use plotters::prelude::*;

/// One epoch of one seed, as the plots read it.
pub trait Row {
    fn seed(&self) -> u64;
    fn epoch(&self) -> usize;
}

/// A named series: its legend, colour and how to read it from a row.
pub type Series<R> = (&'static str, RGBColor, fn(&R) -> f64);

/// The value range of `series` over `rows`, widened when flat.
fn range<R: Row>(rows: &[R], series: &[Series<R>]) -> (f64, f64) {
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

fn panel<DB: DrawingBackend, R: Row>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    rows: &[R],
    series: &[Series<R>],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let max_epoch = rows.iter().map(Row::epoch).max().unwrap_or(1).max(2);
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
    let mut seeds: Vec<u64> = rows.iter().map(Row::seed).collect();
    seeds.dedup();
    for &(name, color, value) in series {
        for (i, &seed) in seeds.iter().enumerate() {
            let points = rows
                .iter()
                .filter(|r| r.seed() == seed)
                .map(|r| (r.epoch(), value(r)));
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

/// Two panels of curves, each a caption and its series, under `title`, as an SVG document.
pub fn panels_svg<R: Row>(title: &str, rows: &[R], panels: [(&str, &[Series<R>]); 2]) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 360)).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .and_then(|_| root.titled(title, ("sans-serif", 18)))
            .and_then(|body| {
                let [left, right] = <[_; 2]>::try_from(body.split_evenly((1, 2)))
                    .unwrap_or_else(|_| unreachable!("two panels"));
                panel(&left, panels[0].0, rows, panels[0].1)?;
                panel(&right, panels[1].0, rows, panels[1].1)
            })
            .and_then(|_| root.present());
        drawn.expect("drawing into a string cannot fail");
    }
    svg
}
