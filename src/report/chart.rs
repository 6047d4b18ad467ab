//! Charts of the HTML reports, drawn by `plotters` into inline SVG strings: per-tool
//! definition bytes (version diff), the per-request token timeline, lanes over time
//! (poll episodes per target, background jobs per session), horizontal bars (cost by
//! cause) and lines across versions (history).
//!
//! Every label comes from a trace and goes through plotters' SVG backend, which escapes
//! text and attribute values (`<`, `>`, `&`, quotes); the result is placed in the page as
//! markup. Sizes are pixels; a chart that cannot be drawn returns the error as text, which
//! the page shows instead of the chart.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::diff::tools::ToolState;

/// Colours: A / loaded / uncached, B, deferred, cache write, cache read, marks.
const GREY: RGBColor = RGBColor(150, 150, 150);
const BLUE: RGBColor = RGBColor(52, 101, 164);
const ORANGE: RGBColor = RGBColor(230, 126, 34);
const PURPLE: RGBColor = RGBColor(142, 68, 173);
const GREEN: RGBColor = RGBColor(39, 174, 96);
const RED: RGBColor = RGBColor(192, 57, 43);
/// One colour per series or category, in order.
const PALETTE: [RGBColor; 8] = [
    BLUE,
    ORANGE,
    GREEN,
    RED,
    PURPLE,
    RGBColor(22, 160, 133),
    RGBColor(127, 140, 141),
    RGBColor(211, 84, 0),
];

/// Width of every chart, pixels.
pub const WIDTH: u32 = 960;
/// Above this many requests the timeline sums neighbours into one bar each.
pub const TIMELINE_BARS: usize = 600;
/// Width of one character of a 12-pixel chart label, pixels (an upper estimate for the
/// usual sans-serif fonts), and the least room between two labels.
const LABEL_CHAR_PX: f64 = 7.0;
const LABEL_GAP_PX: f64 = 12.0;

const FONT: &str = "sans-serif";

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// One stacked layer of the timeline: lower and upper bound of a bar, colour, legend.
type Layer = (
    fn(&RequestBar) -> u64,
    fn(&RequestBar) -> u64,
    RGBColor,
    &'static str,
);

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("chart not drawn: {e}")
}

/// Colour of the `i`-th category.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One tool in the version-diff bar chart.
#[derive(Clone, Debug)]
pub struct ToolBar {
    /// Tool name.
    pub name: String,
    /// Definition bytes in A.
    pub a: u64,
    /// Definition bytes in B.
    pub b: u64,
    /// How B sends it (the api layer's tool words).
    pub b_state: ToolState,
}

fn draw<F>(width: u32, height: u32, f: F) -> Result<String, String>
where
    F: FnOnce(&Area) -> Result<(), String>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        f(&root)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Draw the legend of a chart's labelled series at `pos`.
fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    pos: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FONT, 12))
        .draw()
        .map_err(err)
}

/// How a legend entry shows its series.
#[derive(Clone, Copy)]
enum Swatch {
    /// A filled square (bars).
    Square(RGBColor),
    /// A filled dot (marks).
    Dot(RGBColor),
    /// A line (line series).
    Line(RGBColor),
}

/// Split `root` into the chart's area and, right of it, a column wide enough for the
/// legend of `items` ([`side_legend`]): the longest label at [`LABEL_CHAR_PX`] a
/// character, the swatch and a gap.
fn legend_column<'a>(root: &Area<'a>, items: &[(String, Swatch)]) -> (Area<'a>, Area<'a>) {
    let chars = items.iter().map(|i| i.0.chars().count()).max().unwrap_or(0);
    let w = (chars as f64 * LABEL_CHAR_PX) as u32 + 24 + 12;
    root.split_horizontally(WIDTH.saturating_sub(w) as i32)
}

/// A legend in its own column beside the plot, one entry a row from the plot's top, so
/// it never covers a bar, a point or a label.
fn side_legend(area: &Area, items: &[(String, Swatch)]) -> Result<(), String> {
    for (i, (label, swatch)) in items.iter().enumerate() {
        let y = 52 + i as i32 * 18;
        match *swatch {
            Swatch::Square(c) => area.draw(&Rectangle::new([(4, y - 5), (16, y + 5)], c.filled())),
            Swatch::Dot(c) => area.draw(&Circle::new((10, y), 5, c.filled())),
            Swatch::Line(c) => {
                area.draw(&PathElement::new(vec![(2, y), (18, y)], c.stroke_width(2)))
            }
        }
        .map_err(err)?;
        let style = (FONT, 12)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(label.clone(), (24, y), style))
            .map_err(err)?;
    }
    Ok(())
}

/// A chart with named rows on its y axis and a numeric x axis.
type RowChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordi32>,
    >,
>;

/// A chart of named rows: one y segment per label (the first at the bottom), a numeric x
/// axis from 0 to `x_max` described as `x_desc`, `label_width` pixels for the row labels;
/// caption and mesh drawn.
fn row_chart<'a, 'b>(
    root: &'a Area<'b>,
    title: &str,
    labels: &[String],
    x_max: f64,
    x_desc: &str,
    label_width: u32,
) -> Result<RowChart<'a, 'b>, String> {
    let n = labels.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(label_width)
        .build_cartesian_2d(0f64..x_max, (0..(n as i32 - 1).max(1)).into_segmented())
        .map_err(err)?;
    let fmt = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&fmt)
        .x_desc(x_desc)
        .label_style((FONT, 12))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// Per-tool definition bytes, A above B, B coloured by how it is sent (loaded, deferred
/// definition, placeholder, announced only). Largest tools first, as given.
pub fn tool_bytes(tools: &[ToolBar], a_name: &str, b_name: &str) -> Result<String, String> {
    // Segment 0 is at the bottom: reverse so the first (largest) tool is on top.
    let tools: Vec<&ToolBar> = tools.iter().rev().collect();
    let n = tools.len().max(1);
    let row = 22u32;
    let height = 70 + row * n as u32 + 30;
    let max = tools.iter().map(|t| t.a.max(t.b)).max().unwrap_or(1).max(1) as f64 * 1.08;
    let labels: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    draw(WIDTH, height, |root| {
        let mut chart = row_chart(
            root,
            "Tool definition bytes, A vs B",
            &labels,
            max,
            "bytes",
            190,
        )?;
        let half = (row / 2).saturating_sub(2);
        let bar = |x: f64, i: usize, top: bool, c: RGBColor| {
            let mut r = Rectangle::new(
                [
                    (0.0, SegmentValue::Exact(i as i32)),
                    (x, SegmentValue::Exact(i as i32 + 1)),
                ],
                c.filled(),
            );
            if top {
                r.set_margin(2, half + 2, 0, 0);
            } else {
                r.set_margin(half + 2, 2, 0, 0);
            }
            r
        };
        chart
            .draw_series(
                tools
                    .iter()
                    .enumerate()
                    .map(|(i, t)| bar(t.a as f64, i, true, GREY)),
            )
            .map_err(err)?
            .label(format!("A: {a_name}"))
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], GREY.filled()));
        for (form, c, label) in [
            (ToolState::Loaded, BLUE, "B: loaded"),
            (
                ToolState::DeferredDefinition,
                PURPLE,
                "B: deferred definition",
            ),
            (ToolState::Placeholder, GREEN, "B: placeholder"),
        ] {
            if !tools.iter().any(|t| t.b_state == form) {
                continue;
            }
            chart
                .draw_series(
                    tools
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| t.b_state == form)
                        .map(|(i, t)| bar(t.b as f64, i, false, c)),
                )
                .map_err(err)?
                .label(format!("{label} — {b_name}"))
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        chart
            .draw_series(
                tools
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.b_state == ToolState::Announced)
                    .map(|(i, _)| {
                        Text::new(
                            "B: announced for ToolSearch (0 bytes)",
                            (max * 0.005, SegmentValue::CenterOf(i as i32)),
                            (FONT, 11).into_font().color(&ORANGE),
                        )
                    }),
            )
            .map_err(err)?;
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}

/// One request in the token timeline.
#[derive(Clone, Debug, Default)]
pub struct RequestBar {
    /// Uncached input tokens.
    pub uncached: u64,
    /// Cache-write tokens.
    pub write: u64,
    /// Cache-read tokens.
    pub read: u64,
    /// Miss cause, if the request missed the cache (colours a mark above the bar).
    pub miss: Option<String>,
    /// A gap longer than the TTL before this request, as a label (`gap 330 s > TTL 300 s`).
    pub gap: Option<String>,
}

/// Stacked uncached / cache-write / cache-read tokens per request; misses marked by a
/// coloured dot per cause (`causes` gives the colour order), TTL gaps by a dashed line
/// (labelled where labels have room).
/// More than [`TIMELINE_BARS`] requests are summed in equal groups (marks kept).
pub fn request_timeline(reqs: &[RequestBar], causes: &[String]) -> Result<String, String> {
    let group = reqs.len().div_ceil(TIMELINE_BARS).max(1);
    let bars = grouped_bars(reqs, group);
    let n = bars.len().max(1);
    let max = bars
        .iter()
        .map(|b| b.uncached + b.write + b.read)
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.15;
    let layers = timeline_layers();
    let items: Vec<(String, Swatch)> = layers
        .iter()
        .map(|l| (l.3.to_string(), Swatch::Square(l.2)))
        .chain(
            causes
                .iter()
                .enumerate()
                .map(|(k, c)| (format!("miss: {c}"), Swatch::Dot(color(k + 3)))),
        )
        .collect();
    draw(WIDTH, 380, |root| {
        let (root, side) = legend_column(root, &items);
        side_legend(&side, &items)?;
        let mut chart = timeline_chart(&root, n, max, group)?;
        let w = if n > 200 { 0.0 } else { 0.12 };
        let stack = |lo: fn(&RequestBar) -> u64, hi: fn(&RequestBar) -> u64, c: RGBColor| {
            bars.iter().enumerate().map(move |(i, b)| {
                // bar i is centred on tick i
                Rectangle::new(
                    [
                        (i as f64 - 0.5 + w, lo(b) as f64),
                        (i as f64 + 0.5 - w, hi(b) as f64),
                    ],
                    c.filled(),
                )
            })
        };
        for (lo, hi, c, _) in layers {
            chart.draw_series(stack(lo, hi, c)).map_err(err)?;
        }
        miss_marks(&mut chart, &bars, causes, max)?;
        gap_lines(&mut chart, &bars, max)
    })
}

/// The timeline's chart: requests on x (one bar each, or per `group`), tokens on y.
type TimelineChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// `reqs` summed in groups of `group` (a group keeps its first miss and gap marks).
fn grouped_bars(reqs: &[RequestBar], group: usize) -> Vec<RequestBar> {
    reqs.chunks(group)
        .map(|c| RequestBar {
            uncached: c.iter().map(|r| r.uncached).sum(),
            write: c.iter().map(|r| r.write).sum(),
            read: c.iter().map(|r| r.read).sum(),
            miss: c.iter().find_map(|r| r.miss.clone()),
            gap: c.iter().find_map(|r| r.gap.clone()),
        })
        .collect()
}

/// The three stacked layers of a bar, bottom up: uncached input, cache write, cache read.
fn timeline_layers() -> [Layer; 3] {
    [
        (|_| 0, |b| b.uncached, GREY, "uncached input"),
        (
            |b| b.uncached,
            |b| b.uncached + b.write,
            ORANGE,
            "cache write",
        ),
        (
            |b| b.uncached + b.write,
            |b| b.uncached + b.write + b.read,
            GREEN,
            "cache read",
        ),
    ]
}

/// The timeline's caption, axes and mesh, for `n` bars of `group` requests each and a
/// y axis up to `max` tokens.
fn timeline_chart<'a, 'b>(
    root: &'a Area<'b>,
    n: usize,
    max: f64,
    group: usize,
) -> Result<TimelineChart<'a, 'b>, String> {
    let x_desc = if group > 1 {
        format!("request (bars sum {group} requests each)")
    } else {
        "request".to_string()
    };
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Input tokens per request: uncached, cache write, cache read",
            (FONT, 18),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..max)
        .map_err(err)?;
    // Ticks at whole bar numbers, under the bars' centres.
    let gfmt = |v: &f64| {
        if *v < 0.0 || v.fract().abs() > 1e-9 {
            String::new()
        } else {
            format!("{}", (*v as usize) * group)
        }
    };
    let yfmt = |v: &f64| format!("{v:.0}");
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .y_label_formatter(&yfmt)
        .x_labels(n.min(20))
        .x_label_formatter(&gfmt)
        .x_desc(x_desc.as_str())
        .y_desc("tokens")
        .label_style((FONT, 12))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// A dot above each bar that missed the cache, coloured by its cause.
fn miss_marks(
    chart: &mut TimelineChart,
    bars: &[RequestBar],
    causes: &[String],
    max: f64,
) -> Result<(), String> {
    for (k, cause) in causes.iter().enumerate() {
        let c = color(k + 3);
        chart
            .draw_series(
                bars.iter()
                    .enumerate()
                    .filter(|(_, b)| b.miss.as_deref() == Some(cause.as_str()))
                    .map(|(i, b)| {
                        let top = (b.uncached + b.write + b.read) as f64;
                        Circle::new((i as f64, top + max * 0.04), 5, c.filled())
                    }),
            )
            .map_err(err)?;
    }
    Ok(())
}

/// Every gap gets its dashed line; a label only where it does not run into the previous
/// one (labels left of the middle read rightwards, the others leftwards).
fn gap_lines(chart: &mut TimelineChart, bars: &[RequestBar], max: f64) -> Result<(), String> {
    let n = bars.len().max(1);
    let px = chart.plotting_area().get_pixel_range().0;
    let bar_px = (px.end - px.start) as f64 / n as f64;
    let mut last_end = f64::NEG_INFINITY; // right end of the last label, pixels
    for (i, b) in bars.iter().enumerate() {
        let Some(g) = &b.gap else { continue };
        chart
            .draw_series(DashedLineSeries::new(
                [(i as f64 - 0.5, 0.0), (i as f64 - 0.5, max * 0.92)],
                6,
                4,
                RED.stroke_width(2),
            ))
            .map_err(err)?;
        let right = i * 2 > n;
        let at = i as f64 * bar_px;
        let width = g.chars().count() as f64 * LABEL_CHAR_PX;
        let (start, end) = if right {
            (at - width, at)
        } else {
            (at, at + width)
        };
        if start < last_end + LABEL_GAP_PX {
            continue;
        }
        last_end = end;
        let style = (FONT, 12).into_font().color(&RED);
        let (style, x) = if right {
            (
                style.pos(Pos::new(HPos::Right, VPos::Center)),
                i as f64 - 0.6,
            )
        } else {
            (style, i as f64 - 0.4)
        };
        chart
            .draw_series(std::iter::once(Text::new(
                g.clone(),
                (x, max * 0.97),
                style,
            )))
            .map_err(err)?;
    }
    Ok(())
}

/// One bar of a lane chart (a poll episode, a background job).
#[derive(Clone, Debug)]
pub struct LaneBar {
    /// Lane label (a target, a session/thread).
    pub lane: String,
    /// Start, seconds from the first request.
    pub start_s: f64,
    /// End, seconds from the first request.
    pub end_s: f64,
    /// Text next to the bar.
    pub label: String,
    /// Category (colour and legend): a state, a kind.
    pub category: String,
    /// What the bar weighs when lanes are capped ([`busiest_lanes`]): polls, jobs.
    pub weight: u64,
}

/// Keep the bars of the `max` lanes with the greatest total weight (ties: the lane seen
/// first), in their original order; returns them and the number of lanes there were. A
/// chart of hundreds of lanes is unreadable; the report's table lists every row.
pub fn busiest_lanes(bars: Vec<LaneBar>, max: usize) -> (Vec<LaneBar>, usize) {
    let mut lanes: Vec<(&str, u64, usize)> = Vec::new(); // lane, weight, first seen
    for (i, b) in bars.iter().enumerate() {
        match lanes.iter_mut().find(|(l, _, _)| *l == b.lane) {
            Some(l) => l.1 += b.weight,
            None => lanes.push((&b.lane, b.weight, i)),
        }
    }
    let total = lanes.len();
    if total <= max {
        return (bars, total);
    }
    lanes.sort_by(|x, y| y.1.cmp(&x.1).then(x.2.cmp(&y.2)));
    let keep: std::collections::HashSet<String> =
        lanes[..max].iter().map(|(l, _, _)| l.to_string()).collect();
    (
        bars.into_iter()
            .filter(|b| keep.contains(&b.lane))
            .collect(),
        total,
    )
}

/// Rows of a lane chart: each bar's row, and each row's label (the lane's name on its
/// first row, empty on the rows below it). Bars of one lane that overlap in time go to
/// rows below each other (first fit, in the order given), so none hides another.
fn lane_rows(bars: &[LaneBar], gap_s: f64) -> (Vec<usize>, Vec<String>) {
    let mut lanes: Vec<(&str, Vec<f64>)> = Vec::new(); // lane, end of each of its rows
    let mut placed: Vec<(usize, usize)> = Vec::with_capacity(bars.len()); // lane, row in lane
    for b in bars {
        let li = match lanes.iter().position(|(l, _)| *l == b.lane) {
            Some(i) => i,
            None => {
                lanes.push((&b.lane, Vec::new()));
                lanes.len() - 1
            }
        };
        let rows = &mut lanes[li].1;
        let ri = match rows.iter().position(|end| *end + gap_s <= b.start_s) {
            Some(i) => i,
            None => {
                rows.push(f64::NEG_INFINITY);
                rows.len() - 1
            }
        };
        rows[ri] = rows[ri].max(b.end_s);
        placed.push((li, ri));
    }
    let mut first = Vec::with_capacity(lanes.len());
    let mut labels = Vec::new();
    for (lane, rows) in &lanes {
        first.push(labels.len());
        for r in 0..rows.len() {
            labels.push(if r == 0 {
                clip_label(lane, LANE_LABEL_CHARS)
            } else {
                String::new()
            });
        }
    }
    let row = placed.iter().map(|(l, r)| first[*l] + r).collect();
    (row, labels)
}

/// Characters of a lane label the chart shows (the tables show it whole).
const LANE_LABEL_CHARS: usize = 40;

/// `s` if it has at most `max` characters, else its first `max - 1` and "…" (the mark
/// that the chart shortened it).
fn clip_label(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(max.saturating_sub(1)).collect();
        c.push('…');
        c
    }
}

/// Bars on lanes over time (Gantt-like): one lane per distinct [`LaneBar::lane`], in order
/// of first appearance; bars of a lane that overlap in time stack on rows under it. The
/// time axis covers at least `span_s` seconds, so charts of one page can share it.
pub fn lanes(title: &str, bars: &[LaneBar], span_s: f64) -> Result<String, String> {
    let mut cats: Vec<&str> = Vec::new();
    for b in bars {
        if !cats.contains(&b.category.as_str()) {
            cats.push(&b.category);
        }
    }
    let end = bars.iter().map(|b| b.end_s).fold(span_s.max(1.0), f64::max) * 1.6;
    // A bar is drawn at least this wide; the label after it needs room too.
    let min_w = end * 0.004;
    let (row_of, mut labels) = lane_rows(bars, end * 0.25);
    let n = labels.len().max(1);
    // Segment 0 is at the bottom: flip so the first lane is on top.
    let row_of: Vec<usize> = row_of.iter().map(|r| n - 1 - r).collect();
    labels.reverse();
    let row = 30u32;
    let height = 80 + row * n as u32 + 30;
    draw(WIDTH, height, |root| {
        let mut chart = row_chart(
            root,
            title,
            &labels,
            end,
            "seconds from the first request",
            240,
        )?;
        for (k, cat) in cats.iter().enumerate() {
            let c = color(k);
            chart
                .draw_series(
                    bars.iter()
                        .zip(&row_of)
                        .filter(|(b, _)| b.category == *cat)
                        .map(|(b, &i)| {
                            let i = i as i32;
                            let w = (b.end_s - b.start_s).max(min_w);
                            let mut r = Rectangle::new(
                                [
                                    (b.start_s, SegmentValue::Exact(i)),
                                    (b.start_s + w, SegmentValue::Exact(i + 1)),
                                ],
                                c.filled(),
                            );
                            r.set_margin(6, 6, 0, 0);
                            r
                        }),
                )
                .map_err(err)?;
        }
        // A label runs from its bar's end to the plot's right edge at most; longer ones
        // are shortened with "…" (the tables have them whole).
        let px_per_s = chart.plotting_area().dim_in_pixel().0 as f64 / end;
        chart
            .draw_series(bars.iter().zip(&row_of).map(|(b, &i)| {
                let at = b.end_s + end * 0.01;
                let room = ((end - at) * px_per_s / LABEL_CHAR_PX) as usize;
                Text::new(
                    clip_label(&format!("{}: {}", b.category, b.label), room),
                    (at, SegmentValue::CenterOf(i as i32)),
                    (FONT, 12).into_font(),
                )
            }))
            .map_err(err)?;
        Ok(())
    })
}

/// Horizontal bars, one per `(label, value)`, with `unit` on the axis.
pub fn hbars(title: &str, items: &[(String, f64)], unit: &str) -> Result<String, String> {
    let n = items.len().max(1);
    let row = 28u32;
    let max = items.iter().map(|i| i.1).fold(0.0f64, f64::max).max(1e-9) * 1.15;
    let height = 70 + row * n as u32 + 30;
    let labels: Vec<String> = items.iter().map(|i| i.0.clone()).collect();
    draw(WIDTH, height, |root| {
        let mut chart = row_chart(root, title, &labels, max, unit, 190)?;
        chart
            .draw_series(items.iter().enumerate().map(|(i, (_, v))| {
                let mut r = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(i as i32)),
                        (*v, SegmentValue::Exact(i as i32 + 1)),
                    ],
                    color(i).filled(),
                );
                r.set_margin(5, 5, 0, 0);
                r
            }))
            .map_err(err)?;
        Ok(())
    })
}

/// Lines across versions: `x` labels (versions) and named series of values.
pub fn lines(title: &str, x: &[String], series: &[(String, Vec<u64>)]) -> Result<String, String> {
    let n = x.len().max(1);
    let max = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.15;
    // A series equal to an earlier one is drawn under it: the legend says so, and its
    // points are rings around the earlier one's dots.
    let same_as: Vec<Option<usize>> = (0..series.len())
        .map(|k| (0..k).find(|&j| series[j].1 == series[k].1))
        .collect();
    let items: Vec<(String, Swatch)> = series
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let name = match same_as[k] {
                Some(j) => format!("{} (= {})", s.0, series[j].0),
                None => s.0.clone(),
            };
            (name, Swatch::Line(color(k)))
        })
        .collect();
    draw(WIDTH, 340, |root| {
        let (root, side) = legend_column(root, &items);
        side_legend(&side, &items)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 18))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d((0..(n as i32 - 1).max(1)).into_segmented(), 0f64..max)
            .map_err(err)?;
        let fmt = |v: &SegmentValue<i32>| match v {
            SegmentValue::CenterOf(i) => x.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        let yfmt = |v: &f64| format!("{v:.0}");
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .y_label_formatter(&yfmt)
            .x_labels(n)
            .x_label_formatter(&fmt)
            .x_desc("version")
            .label_style((FONT, 12))
            .draw()
            .map_err(err)?;
        for (k, (_, vals)) in series.iter().enumerate() {
            let c = color(k);
            let pts: Vec<(SegmentValue<i32>, f64)> = vals
                .iter()
                .enumerate()
                .map(|(i, v)| (SegmentValue::CenterOf(i as i32), *v as f64))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(err)?;
            let rings = same_as[k].is_some();
            chart
                .draw_series(pts.into_iter().map(|p| match rings {
                    true => Circle::new(p, 7, c.stroke_width(2)),
                    false => Circle::new(p, 4, c.filled()),
                }))
                .map_err(err)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_traces_are_escaped_in_the_svg() {
        let tools = [ToolBar {
            name: "<script>alert(1)</script>".into(),
            a: 10,
            b: 0,
            b_state: ToolState::Announced,
        }];
        let svg = tool_bytes(&tools, "a\"onload=\"x", "b").unwrap();
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!svg.contains("a\"onload"));
    }

    fn bar(lane: &str, start_s: f64, end_s: f64) -> LaneBar {
        LaneBar {
            lane: lane.into(),
            start_s,
            end_s,
            label: String::new(),
            category: "running".into(),
            weight: 1,
        }
    }

    #[test]
    fn capped_lanes_keep_the_heaviest_in_order() {
        let mut bars = vec![bar("a", 0.0, 1.0), bar("b", 0.0, 1.0), bar("c", 0.0, 1.0)];
        bars.push(bar("c", 2.0, 3.0));
        bars[1].weight = 5;
        let (kept, total) = busiest_lanes(bars.clone(), 2);
        assert_eq!(total, 3);
        let lanes: Vec<&str> = kept.iter().map(|b| b.lane.as_str()).collect();
        assert_eq!(lanes, ["b", "c", "c"]);
        assert_eq!(busiest_lanes(bars, 3).0.len(), 4);
    }

    #[test]
    fn overlapping_bars_of_one_lane_stack_on_rows_under_it() {
        // s1 runs two jobs at once (0-10 s and 5-8 s), then a third after both (20-30 s);
        // s2 runs one. Rows: s1's first row holds the first and third, the second row the
        // overlapping one; s2 comes after s1's rows.
        let bars = [
            bar("s1", 0.0, 10.0),
            bar("s1", 5.0, 8.0),
            bar("s2", 1.0, 2.0),
            bar("s1", 20.0, 30.0),
        ];
        let (rows, labels) = lane_rows(&bars, 1.0);
        assert_eq!(rows, [0, 1, 2, 0]);
        assert_eq!(labels, ["s1", "", "s2"]);
        // a lane label too long for the chart is shortened visibly
        let long = "s1/main: mcp__jobs__get_status({\"job_id\":\"job-7f3a\"})";
        let (_, labels) = lane_rows(&[bar(long, 0.0, 1.0)], 1.0);
        assert_eq!(labels, ["s1/main: mcp__jobs__get_status({\"job_id…"]);
        assert_eq!(labels[0].chars().count(), LANE_LABEL_CHARS);
        // a gap shorter than the label room also stacks
        let (rows, _) = lane_rows(&[bar("s1", 0.0, 10.0), bar("s1", 10.5, 12.0)], 1.0);
        assert_eq!(rows, [0, 1]);
    }

    /// Boxes `[x0, y0, x1, y1]` (pixels) of what `svg` draws — rectangles but the white
    /// background, circles — and of its texts equal to one of `labels` (at
    /// [`LABEL_CHAR_PX`] a character, 12 pixels high).
    fn drawn_and_labels(svg: &str, labels: &[&str]) -> (Vec<[f64; 4]>, Vec<[f64; 4]>) {
        let num = |c: &regex::Captures, i: usize| c[i].parse::<f64>().unwrap();
        let rect = regex::Regex::new(
            r#"<rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"[^>]*fill="([^"]+)""#,
        )
        .unwrap();
        let circle =
            regex::Regex::new(r#"<circle cx="([-\d.]+)" cy="([-\d.]+)" r="([\d.]+)""#).unwrap();
        let text =
            regex::Regex::new(r#"<text x="([-\d.]+)" y="([-\d.]+)"[^>]*>\s*([^<]*?)\s*</text>"#)
                .unwrap();
        let mut drawn: Vec<[f64; 4]> = rect
            .captures_iter(svg)
            .filter(|c| &c[5] != "#FFFFFF")
            .map(|c| {
                let (x, y) = (num(&c, 1), num(&c, 2));
                [x, y, x + num(&c, 3), y + num(&c, 4)]
            })
            .collect();
        drawn.extend(circle.captures_iter(svg).map(|c| {
            let (x, y, r) = (num(&c, 1), num(&c, 2), num(&c, 3));
            [x - r, y - r, x + r, y + r]
        }));
        let boxes = text
            .captures_iter(svg)
            .filter(|c| labels.contains(&&c[3]))
            .map(|c| {
                let (x, y) = (num(&c, 1), num(&c, 2));
                let w = c[3].chars().count() as f64 * LABEL_CHAR_PX;
                [x, y - 6.0, x + w, y + 6.0]
            })
            .collect();
        (drawn, boxes)
    }

    fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
        a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
    }

    #[test]
    fn legends_cover_no_bar_point_or_mark() {
        // The tallest bars and the first point sit where a legend inside the plot went.
        let reqs: Vec<RequestBar> = (0..30)
            .map(|i| RequestBar {
                write: if i == 0 { 16_000 } else { 0 },
                read: if i == 0 { 0 } else { 16_000 },
                miss: (i == 1).then(|| "ttl_expired".to_string()),
                gap: (i == 1).then(|| "gap 400 s > 300 s".to_string()),
                ..RequestBar::default()
            })
            .collect();
        let svg = request_timeline(&reqs, &["ttl_expired".into()]).unwrap();
        let labels = [
            "uncached input",
            "cache write",
            "cache read",
            "miss: ttl_expired",
        ];
        let (drawn, legend) = drawn_and_labels(&svg, &labels);
        assert_eq!(legend.len(), 4, "{svg}");
        assert!(drawn.len() > 30);
        for l in &legend {
            assert!(l[2] <= WIDTH as f64, "legend label cut at the right: {l:?}");
            for d in &drawn {
                assert!(!overlap(l, d), "legend label {l:?} covers {d:?}");
            }
        }
        let names = [
            "tool definitions",
            "loaded tools",
            "announced for ToolSearch",
        ];
        let series: Vec<(String, Vec<u64>)> = names
            .iter()
            .zip(0u64..)
            .map(|(n, k)| (n.to_string(), vec![20 - k, 12, 12, 20]))
            .collect();
        let x: Vec<String> = (0..4).map(|i| format!("2.1.30{i}")).collect();
        let svg = lines("Tools per version", &x, &series).unwrap();
        let (drawn, legend) = drawn_and_labels(&svg, &names);
        assert_eq!((legend.len(), drawn.len()), (3, 12), "{svg}");
        for l in &legend {
            for d in &drawn {
                assert!(!overlap(l, d), "legend label {l:?} covers point {d:?}");
            }
        }
    }

    #[test]
    fn lane_labels_end_inside_the_chart() {
        let mut b = bar("s1", 0.0, 10.0);
        b.category = "completed".into();
        b.label = format!(
            "job-7f3a ({})",
            "mcp__jobs__start_job, completed, ".repeat(4)
        );
        let svg = lanes("Background jobs per session", &[b], 0.0).unwrap();
        let text = regex::Regex::new(r#"<text x="([\d.]+)"[^>]*>\s*(completed: [^<]*?)\s*</text>"#)
            .unwrap();
        let c = text.captures(&svg).expect("the bar's label");
        let x: f64 = c[1].parse().unwrap();
        assert!(c[2].ends_with('…'), "{}", &c[2]);
        let right = x + c[2].chars().count() as f64 * LABEL_CHAR_PX;
        assert!(right <= WIDTH as f64, "label ends at {right} px");
    }

    /// Issue 31 kind 15: a timeline bar sat between two tick labels (bar i spanned i..i+1
    /// and tick i was its left edge); each tick label is now under its bar's centre.
    #[test]
    fn timeline_bars_between_ticks() {
        let bars: Vec<RequestBar> = (0..5u64)
            .map(|i| RequestBar {
                uncached: 100 + i,
                write: 0,
                read: 0,
                miss: None,
                gap: None,
            })
            .collect();
        let svg = request_timeline(&bars, &[]).unwrap();
        let names = ["0", "1", "2", "3", "4"];
        let (drawn, labels) = drawn_and_labels(&svg, &names);
        // the five bars: the tallest rectangles of the grey layer, left to right
        let mut bars: Vec<[f64; 4]> = drawn.into_iter().filter(|r| r[3] - r[1] > 20.0).collect();
        bars.sort_by(|a, b| a[0].total_cmp(&b[0]));
        bars.retain(|r| r[2] - r[0] < 200.0);
        assert_eq!(bars.len(), 5, "{bars:?}");
        let text_x = regex::Regex::new(
            r#"<text x="([-\d.]+)"[^>]*text-anchor="middle"[^>]*>\s*([0-4])\s*</text>"#,
        )
        .unwrap();
        let ticks: Vec<(f64, usize)> = text_x
            .captures_iter(&svg)
            .map(|c| (c[1].parse().unwrap(), c[2].parse().unwrap()))
            .collect();
        assert_eq!(ticks.len(), 5, "{labels:?} {ticks:?}");
        for (x, i) in ticks {
            let centre = (bars[i][0] + bars[i][2]) / 2.0;
            assert!(
                (x - centre).abs() <= 1.5,
                "tick {i} at {x}, bar centre {centre}"
            );
        }
    }

    /// Issue 31 kind 15: two series with equal values were drawn one on top of the other
    /// in the history chart (one invisible); the legend names the equality and the later
    /// series' points are rings around the earlier one's dots.
    #[test]
    fn history_series_drawn_on_top_of_each_other() {
        let x = ["2.1.303".to_string(), "2.1.304".to_string()];
        let series = [
            ("tools".to_string(), vec![20, 12]),
            ("loaded tools".to_string(), vec![20, 12]),
            ("deferred".to_string(), vec![0, 10]),
        ];
        let svg = lines("Tools per version", &x, &series).unwrap();
        assert!(svg.contains("loaded tools (= tools)"), "{svg}");
        assert!(!svg.contains("deferred (="));
        let ring = regex::Regex::new(r#"<circle [^>]*r="7"[^>]*fill="none""#).unwrap();
        assert_eq!(
            ring.find_iter(&svg).count(),
            2,
            "one ring per point of the equal series"
        );
    }

    #[test]
    fn long_timelines_are_grouped() {
        let reqs: Vec<RequestBar> = (0..1300)
            .map(|i| RequestBar {
                uncached: 1,
                read: 10,
                miss: (i == 700).then(|| "ttl_expired".to_string()),
                ..RequestBar::default()
            })
            .collect();
        let svg = request_timeline(&reqs, &["ttl_expired".into()]).unwrap();
        assert!(svg.contains("bars sum 3 requests each"));
        // One miss mark (a circle) for the one missed request, plus its legend swatch.
        assert_eq!(svg.matches("<circle").count(), 2);
    }

    #[test]
    fn many_ttl_gaps_keep_their_lines_but_labels_do_not_overlap() {
        // 50 gaps spread over 500 requests: about 860 pixels of plot, labels of 6 × 7
        // pixels plus 12 between them: at most 15 fit.
        let reqs: Vec<RequestBar> = (0..500)
            .map(|i| RequestBar {
                read: 10,
                gap: (i % 10 == 5).then(|| format!("gap {i}")),
                ..RequestBar::default()
            })
            .collect();
        let svg = request_timeline(&reqs, &[]).unwrap();
        let labels = svg.matches(">\ngap ").count();
        assert!((5..=15).contains(&labels), "{labels} labels");
        // The labels' spans (x, anchor, 7 px per character) do not overlap.
        let mut spans: Vec<(f64, f64)> = svg
            .split("<text ")
            .filter(|t| t.contains(">\ngap "))
            .map(|t| {
                let x: f64 = t["x=\"".len()..]
                    .split('"')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                let text = t.split(">\n").nth(1).unwrap().split('\n').next().unwrap();
                let w = text.len() as f64 * LABEL_CHAR_PX;
                if t.contains("text-anchor=\"end\"") {
                    (x - w, x)
                } else {
                    (x, x + w)
                }
            })
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "{:?} overlaps {:?}", w[0], w[1]);
        }
        let one = request_timeline(&reqs[..7], &[]).unwrap();
        assert_eq!(one.matches(">\ngap ").count(), 1);
    }
}
