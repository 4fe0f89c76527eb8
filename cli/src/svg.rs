//! A bar chart as a standalone SVG document, written by hand: one bar per node, a dashed
//! line at the mean, the count above each bar, the node id below it.

use std::fmt::Write;

const BAR: f64 = 28.0;
const GAP: f64 = 12.0;
const PLOT_HEIGHT: f64 = 240.0;
const LEFT: f64 = 56.0;
const TOP: f64 = 48.0;
/// Room under the plot for ids, written at an angle.
const BOTTOM: f64 = 96.0;

/// The chart of `bars` (label, value) with a line at `mean`, titled `title`.
pub fn bar_chart(title: &str, bars: &[(&str, u64)], mean: f64) -> String {
    let max = bars.iter().map(|&(_, value)| value).max().unwrap_or(0).max(1) as f64;
    let width = LEFT + bars.len() as f64 * (BAR + GAP) + GAP + 24.0;
    let width = width.max(360.0);
    let height = TOP + PLOT_HEIGHT + BOTTOM;
    let baseline = TOP + PLOT_HEIGHT;
    let y = |value: f64| baseline - value / max * PLOT_HEIGHT;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(svg, r#"<text x="{LEFT}" y="24" font-size="14">{}</text>"#, escape(title));
    let _ =
        writeln!(svg, r#"<line x1="{LEFT}" y1="{baseline}" x2="{:.1}" y2="{baseline}" stroke="black"/>"#, width - 12.0);
    let _ = writeln!(svg, r#"<text x="{:.1}" y="{baseline}" text-anchor="end">0</text>"#, LEFT - 6.0);
    let _ = writeln!(svg, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{max}</text>"#, LEFT - 6.0, TOP + 4.0);
    for (index, &(label, value)) in bars.iter().enumerate() {
        let x = LEFT + GAP + index as f64 * (BAR + GAP);
        let top = y(value as f64);
        let _ = writeln!(
            svg,
            r##"<rect x="{x:.1}" y="{top:.1}" width="{BAR}" height="{:.1}" fill="#4878b0"><title>{}: {value}</title></rect>"##,
            baseline - top,
            escape(label)
        );
        let _ =
            writeln!(svg, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{value}</text>"#, x + BAR / 2.0, top - 4.0);
        let (lx, ly) = (x + BAR / 2.0, baseline + 14.0);
        let _ = writeln!(
            svg,
            r#"<text x="{lx:.1}" y="{ly:.1}" text-anchor="end" transform="rotate(-40 {lx:.1} {ly:.1})">{}</text>"#,
            escape(label)
        );
    }
    let mean_y = y(mean);
    let _ = writeln!(
        svg,
        r##"<line x1="{LEFT}" y1="{mean_y:.1}" x2="{:.1}" y2="{mean_y:.1}" stroke="#c03030" stroke-dasharray="6 4"/>"##,
        width - 12.0
    );
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#c03030">mean {mean:.1}</text>"##,
        width - 12.0,
        mean_y - 4.0
    );
    svg.push_str("</svg>\n");
    svg
}

/// Text for SVG content and attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_node_and_escaped_labels() {
        let svg = bar_chart("a <b>", &[("n&1", 10), ("n2", 30)], 20.0);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert_eq!(svg.matches("<rect x=").count(), 2);
        assert!(svg.contains("a &lt;b&gt;") && svg.contains("n&amp;1: 10"));
        assert!(svg.contains("mean 20.0") && svg.trim_end().ends_with("</svg>"));
    }
}
