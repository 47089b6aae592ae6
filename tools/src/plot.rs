//! A bar chart (SVG) of one measured figure per system, for the benchmarks.

use std::path::Path;

use plotters::prelude::*;

/// Draw `bars` (label, value) as horizontal bars titled `title`, x axis `unit`, into `path`.
pub fn bars(path: &Path, title: &str, unit: &str, bars: &[(String, f64)]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    let h = 90 + 46 * bars.len() as u32;
    let root = SVGBackend::new(path, (960, h)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let max = bars.iter().map(|b| b.1).fold(1.0, f64::max) * 1.15;
    let n = bars.len() as i32;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(10)
        .build_cartesian_2d(0.0..max, 0..n)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_desc(unit)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (label, v)) in bars.iter().enumerate() {
        let y = n - 1 - i as i32;
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, y), (*v, y + 1)],
                color.filled(),
            )))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{label}: {v:.0}"),
                (max * 0.01, y),
                ("sans-serif", 14).into_font(),
            )))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
