//! Training curves as a self-contained SVG (no plotting dependency): training and validation
//! loss on the left, validation and test accuracy on the right, one line per seed.

use std::fmt::Write;

use super::EpochRow;

const PANEL_W: f64 = 420.0;
const PANEL_H: f64 = 280.0;
const MARGIN: f64 = 48.0;
const COLORS: [&str; 4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];

/// A named series: its legend and how to read it from a row.
type Series<'a> = (&'a str, fn(&EpochRow) -> f64);

fn panel(svg: &mut String, x0: f64, title: &str, rows: &[EpochRow], series: &[Series]) {
    let max_epoch = rows.iter().map(|r| r.epoch).max().unwrap_or(1).max(1) as f64;
    let values = rows
        .iter()
        .flat_map(|r| series.iter().map(move |(_, f)| f(r)))
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if lo > hi {
        (0.0, 1.0)
    } else if hi - lo < 1e-9 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    let (w, h) = (PANEL_W - 2.0 * MARGIN, PANEL_H - 2.0 * MARGIN);
    let px = |e: f64| x0 + MARGIN + w * (e - 1.0) / (max_epoch - 1.0).max(1.0);
    let py = |v: f64| MARGIN + h * (1.0 - (v - lo) / (hi - lo));
    let _ = write!(
        svg,
        r##"<rect x="{:.1}" y="{MARGIN}" width="{w}" height="{h}" fill="none" stroke="#999"/><text x="{:.1}" y="24" text-anchor="middle" font-size="14">{title}</text>"##,
        x0 + MARGIN,
        x0 + PANEL_W / 2.0
    );
    for (i, v) in [hi, (hi + lo) / 2.0, lo].iter().enumerate() {
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="10">{v:.3}</text>"#,
            x0 + MARGIN - 4.0,
            py(*v) + 3.0 + if i == 0 { 4.0 } else { 0.0 }
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="10">1</text><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="10">epoch {max_epoch}</text>"#,
        x0 + MARGIN,
        PANEL_H - MARGIN + 14.0,
        x0 + PANEL_W - MARGIN,
        PANEL_H - MARGIN + 14.0
    );
    let mut seeds: Vec<u64> = rows.iter().map(|r| r.seed).collect();
    seeds.dedup();
    for (k, (name, f)) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        for seed in &seeds {
            let points: String = rows
                .iter()
                .filter(|r| r.seed == *seed && f(r).is_finite())
                .map(|r| format!("{:.1},{:.1} ", px(r.epoch as f64), py(f(r))))
                .collect();
            let _ = write!(
                svg,
                r#"<polyline fill="none" stroke="{color}" stroke-opacity="0.6" stroke-width="1" points="{points}"/>"#
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" fill="{color}">{name}</text>"#,
            x0 + MARGIN + 8.0 + 110.0 * k as f64,
            PANEL_H - 12.0
        );
    }
}

/// The SVG document for `rows` (any number of seeds).
pub fn curves_svg(title: &str, rows: &[EpochRow]) -> String {
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif"><title>{title}</title><rect width="100%" height="100%" fill="white"/>"#,
        2.0 * PANEL_W,
        PANEL_H
    );
    panel(
        &mut svg,
        0.0,
        &format!("{title}: loss"),
        rows,
        &[
            ("train loss", |r| r.train_loss),
            ("val loss", |r| r.val_loss),
        ],
    );
    panel(
        &mut svg,
        PANEL_W,
        &format!("{title}: accuracy"),
        rows,
        &[
            ("train acc", |r| r.train_acc),
            ("val acc", |r| r.val_acc),
            ("test acc", |r| r.test_acc),
        ],
    );
    svg + "</svg>\n"
}
