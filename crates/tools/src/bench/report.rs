//! Report helpers: percentiles and medians, Markdown tables, hand-written SVG charts.

use std::fmt::Write as _;

/// Nearest-rank percentile (`p` in 0..=100) of unsorted samples; 0 for no samples.
pub fn percentile(samples: &[u64], p: f64) -> u64 {
    if samples.is_empty() {
        return 0;
    }
    let mut v = samples.to_vec();
    v.sort_unstable();
    percentile_sorted(&v, p)
}

/// Nearest-rank percentile of sorted samples.
pub fn percentile_sorted(v: &[u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let p = p.clamp(0.0, 100.0);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Median of floats (mean of the middle two for an even count); 0 for none.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Index of the median element by `key` (the lower middle one for an even count).
pub fn median_index<T>(xs: &[T], key: impl Fn(&T) -> f64) -> usize {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| {
        key(&xs[a])
            .partial_cmp(&key(&xs[b]))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    idx[(idx.len().saturating_sub(1)) / 2]
}

/// A number with a sensible number of digits for a table cell.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{x:.3}")
    }
}

/// A ratio such as `2.31x`, or `-` when the base is zero.
pub fn fmt_ratio(x: f64, base: f64) -> String {
    if base <= 0.0 || !x.is_finite() {
        "-".into()
    } else {
        format!("{:.2}x", x / base)
    }
}

/// A Markdown table.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    s.push('|');
    for h in header {
        let _ = write!(s, " {h} |");
    }
    s.push('\n');
    s.push('|');
    for (i, _) in header.iter().enumerate() {
        s.push_str(if i == 0 { " --- |" } else { " ---: |" });
    }
    s.push('\n');
    for r in rows {
        s.push('|');
        for c in r {
            let _ = write!(s, " {} |", c.replace('|', "\\|"));
        }
        s.push('\n');
    }
    s
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// "Nice" axis maximum: 1, 2 or 5 times a power of ten at or above `x`.
pub fn nice_max(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= x {
            return m * p;
        }
    }
    10.0 * p
}

/// A line chart: one series per (name, points); x on a log2 scale when `log_x`.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
) -> String {
    let (w, h) = (760.0, 440.0);
    let (l, r, t, b) = (80.0, 200.0, 40.0, 60.0);
    let pw = w - l - r;
    let ph = h - t - b;
    let fx = |x: f64| if log_x { x.max(1e-9).log2() } else { x };
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| fx(q.0)))
        .collect();
    let (xmin, xmax) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let (xmin, xmax) = if xmin.is_finite() && xmax > xmin {
        (xmin, xmax)
    } else {
        (0.0, 1.0)
    };
    let ymax = nice_max(
        series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|q| q.1))
            .fold(0.0, f64::max),
    );
    let px = |x: f64| l + (fx(x) - xmin) / (xmax - xmin) * pw;
    let py = |y: f64| t + ph - (y / ymax) * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        l + pw / 2.0,
        esc(title)
    );
    for i in 0..=5 {
        let y = ymax * i as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{l}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            l + pw,
            py(y),
            py(y),
            l - 6.0,
            py(y) + 4.0,
            fmt_num(y)
        );
    }
    let mut xticks: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .collect();
    xticks.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xticks.dedup();
    for x in xticks {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(x),
            t + ph + 18.0,
            fmt_num(x)
        );
    }
    let _ = writeln!(
        s,
        r##"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        l + pw / 2.0,
        h - 18.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        t + ph / 2.0,
        esc(y_label)
    );
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        for &(x, y) in pts {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                px(x),
                py(y)
            );
        }
        let ly = t + 10.0 + i as f64 * 18.0;
        let _ = writeln!(
            s,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            l + pw + 12.0,
            l + pw + 32.0,
            l + pw + 38.0,
            ly + 4.0,
            esc(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// A grouped bar chart: one group per category, one bar per series.
pub fn bar_chart(
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> String {
    let (w, h) = (860.0, 440.0);
    let (l, r, t, b) = (80.0, 200.0, 40.0, 60.0);
    let pw = w - l - r;
    let ph = h - t - b;
    let ymax = nice_max(
        series
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max),
    );
    let py = |y: f64| t + ph - (y / ymax) * ph;
    let gw = pw / categories.len().max(1) as f64;
    let bw = (gw * 0.8) / series.len().max(1) as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        l + pw / 2.0,
        esc(title)
    );
    for i in 0..=5 {
        let y = ymax * i as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{l}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            l + pw,
            py(y),
            py(y),
            l - 6.0,
            py(y) + 4.0,
            fmt_num(y)
        );
    }
    for (ci, c) in categories.iter().enumerate() {
        let gx = l + gw * ci as f64 + gw * 0.1;
        for (si, (_, vals)) in series.iter().enumerate() {
            let v = vals.get(ci).copied().unwrap_or(0.0);
            let v = if v.is_finite() { v } else { 0.0 };
            let _ = writeln!(
                s,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
                gx + bw * si as f64,
                py(v),
                bw,
                (t + ph - py(v)).max(0.0),
                COLORS[si % COLORS.len()]
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            l + gw * (ci as f64 + 0.5),
            t + ph + 18.0,
            esc(c)
        );
    }
    let _ = writeln!(
        s,
        r##"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        t + ph / 2.0,
        esc(y_label)
    );
    for (i, (name, _)) in series.iter().enumerate() {
        let ly = t + 10.0 + i as f64 * 18.0;
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{}" width="14" height="10" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            l + pw + 12.0,
            ly - 6.0,
            COLORS[i % COLORS.len()],
            l + pw + 32.0,
            ly + 4.0,
            esc(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&v, 100.0), 100);
        assert_eq!(percentile(&v, 0.0), 1);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
        assert_eq!(percentile(&[5, 1, 3], 50.0), 3);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median_index(&[10.0, 30.0, 20.0], |x| *x), 2);
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_num(12345.6), "12346");
        assert_eq!(fmt_num(12.345), "12.3");
        assert_eq!(fmt_num(1.234), "1.23");
        assert_eq!(fmt_num(0.01234), "0.012");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_ratio(5.0, 2.0), "2.50x");
        assert_eq!(fmt_ratio(5.0, 0.0), "-");
        assert_eq!(nice_max(730.0), 1000.0);
        assert_eq!(nice_max(130.0), 200.0);
        assert_eq!(nice_max(0.0), 1.0);
    }

    #[test]
    fn markdown_table() {
        let t = table(&["a", "b"], &[vec!["x".into(), "1|2".into()]]);
        assert_eq!(t, "| a | b |\n| --- | ---: |\n| x | 1\\|2 |\n");
    }

    #[test]
    fn charts_are_svg() {
        let s = line_chart(
            "t<1>",
            "x",
            "y",
            &[("a".into(), vec![(1.0, 2.0), (4.0, 8.0)])],
            true,
        );
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("t&lt;1&gt;"));
        let b = bar_chart("b", "y", &["l.i0".into()], &[("a".into(), vec![3.0])]);
        assert!(b.contains("<rect") && b.trim_end().ends_with("</svg>"));
    }
}
