//! `maple replay --svg FILE`: a picture of a process's address space at a
//! snapshot, the kernel's layout above the model's on one address axis.
//! VMA widths and gaps are log-scaled (an address space spans 2^47 bytes,
//! its VMAs a few pages), VMAs are coloured by kind, and every range where
//! the two layouts differ is marked in red below the rows.

use maple_mm::procmaps::{MapsKind, MapsLine};
use svg::node::element::{Line, Rectangle, Text, Title};
use svg::Document;

const ROW_H: f64 = 44.0;
const TOP: f64 = 60.0;
const LEFT: f64 = 90.0;

/// The colour of a VMA's kind.
fn colour(l: &MapsLine) -> &'static str {
    match (l.kind(), l.name.as_str()) {
        (_, "[heap]") => "#8fd18f",
        (_, "[stack]") => "#f0a040",
        (MapsKind::Anon, _) => "#4caf50",
        (MapsKind::SharedAnon, _) => "#26a69a",
        (MapsKind::File, _) => "#5b8def",
        (MapsKind::Special, _) => "#9c6ade",
    }
}

fn log2(x: u64) -> f64 {
    ((x + 1) as f64).log2()
}

fn covering(lines: &[MapsLine], a: u64) -> Option<&MapsLine> {
    let i = lines.partition_point(|l| l.end <= a);
    lines.get(i).filter(|l| l.start <= a)
}

fn short(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Draws `kernel` and `model` (sorted maps lines) as an SVG document.
pub fn draw(title: &str, kernel: &[MapsLine], model: &[MapsLine]) -> String {
    let cuts = super::compare::cuts(kernel, model);
    // x position of every cut: mapped segments and gaps, both log-scaled.
    let mut xs = Vec::with_capacity(cuts.len());
    let mut x = LEFT;
    for (i, &c) in cuts.iter().enumerate() {
        xs.push(x);
        if let Some(&n) = cuts.get(i + 1) {
            let pages = (n - c) >> 12;
            let mapped = covering(kernel, c).is_some() || covering(model, c).is_some();
            x += if mapped {
                6.0 + 3.0 * log2(pages)
            } else {
                4.0 + 1.5 * log2(pages)
            };
        }
    }
    let width = x + 160.0; // room for the last rotated label
    let height = TOP + 2.0 * ROW_H + 170.0;
    let mut doc = Document::new()
        .set("width", width)
        .set("height", height)
        .set("viewBox", (0, 0, width as i64, height as i64))
        .set("font-family", "monospace")
        .set("font-size", 11);
    doc = doc.add(
        Rectangle::new()
            .set("width", width)
            .set("height", height)
            .set("fill", "white"),
    );
    doc = doc.add(
        Text::new(title)
            .set("x", 10)
            .set("y", 20)
            .set("font-size", 14),
    );
    let legend = [
        ("file", "#5b8def"),
        ("anonymous", "#4caf50"),
        ("[heap]", "#8fd18f"),
        ("[stack]", "#f0a040"),
        ("shared anonymous", "#26a69a"),
        ("special", "#9c6ade"),
        ("differs", "#e53935"),
    ];
    let mut lx = 10.0;
    for (name, c) in legend {
        doc = doc
            .add(
                Rectangle::new()
                    .set("x", lx)
                    .set("y", 30)
                    .set("width", 10)
                    .set("height", 10)
                    .set("fill", c),
            )
            .add(Text::new(name).set("x", lx + 14.0).set("y", 39));
        lx += 30.0 + 7.0 * name.len() as f64;
    }
    for (row, (label, lines)) in [("kernel", kernel), ("model", model)].iter().enumerate() {
        let y = TOP + row as f64 * ROW_H;
        doc = doc.add(Text::new(*label).set("x", 10).set("y", y + 22.0));
        for l in lines.iter() {
            let (Ok(a), Ok(b)) = (cuts.binary_search(&l.start), cuts.binary_search(&l.end)) else {
                continue;
            };
            let rect = Rectangle::new()
                .set("x", xs[a])
                .set("y", y)
                .set("width", (xs[b] - xs[a] - 1.0).max(1.0))
                .set("height", ROW_H - 10.0)
                .set("fill", colour(l))
                .set("stroke", "#333")
                .set("stroke-width", 0.5)
                .add(Title::new(l.to_string()));
            doc = doc.add(rect);
        }
    }
    // Differences: a red bar under every cut segment where the rows differ.
    let yd = TOP + 2.0 * ROW_H;
    for (i, w) in cuts.windows(2).enumerate() {
        let (k, m) = (covering(kernel, w[0]), covering(model, w[0]));
        let same = match (k, m) {
            (None, None) => true,
            (Some(k), Some(m)) => {
                k.start == m.start
                    && k.end == m.end
                    && k.perms() == m.perms()
                    && k.kind() == m.kind()
                    && (k.kind() == MapsKind::Anon || (k.name == m.name && k.offset == m.offset))
            }
            _ => false,
        };
        if !same {
            doc = doc.add(
                Rectangle::new()
                    .set("x", xs[i])
                    .set("y", yd - 6.0)
                    .set("width", (xs[i + 1] - xs[i]).max(2.0))
                    .set("height", 6)
                    .set("fill", "#e53935"),
            );
        }
    }
    // Labels: the address of each run's start, and file names, rotated.
    let mut last_x = f64::MIN;
    for (i, &c) in cuts.iter().enumerate() {
        let starts_run = i == 0 || {
            let p = cuts[i - 1];
            covering(kernel, p).is_none() && covering(model, p).is_none()
        };
        let name = covering(kernel, c)
            .or(covering(model, c))
            .filter(|l| l.start == c && !l.name.is_empty())
            .map(|l| short(&l.name).to_string());
        let text = match (starts_run, name) {
            (true, Some(n)) => format!("{c:#x} {n}"),
            (true, None) => format!("{c:#x}"),
            (false, Some(n)) => n,
            (false, None) => continue,
        };
        if xs[i] - last_x < 11.0 {
            continue;
        }
        last_x = xs[i];
        let ty = yd + 6.0;
        doc = doc.add(
            Text::new(text)
                .set("x", xs[i] + 3.0)
                .set("y", ty)
                .set("transform", format!("rotate(60 {} {})", xs[i] + 3.0, ty)),
        );
        doc = doc.add(
            Line::new()
                .set("x1", xs[i])
                .set("x2", xs[i])
                .set("y1", TOP - 4.0)
                .set("y2", yd)
                .set("stroke", "#bbb")
                .set("stroke-width", 0.3),
        );
    }
    doc.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use maple_mm::procmaps::parse_maps;

    #[test]
    fn marks_differences() {
        let k = parse_maps("10000-12000 rw-p 00000000 00:00 0 \n").unwrap();
        let m =
            parse_maps("10000-11000 rw-p 00000000 00:00 0 \n11000-12000 rw-p 00000000 00:00 0 \n")
                .unwrap();
        let same = draw("t", &k, &k);
        assert!(!same.contains("#e53935\" height=\"6\"") && !same.contains("height=\"6\" width"));
        let diff = draw("t", &k, &m);
        assert!(diff.matches("#e53935").count() > same.matches("#e53935").count());
        assert!(diff.starts_with("<svg"));
    }
}
