//! Facts the list adds where the DOM has no words: places in grids and drawings, marks shown by
//! CSS images, grips and hover-only targets, and ranks counted over every namesake offered.

use serde_json::json;

use super::element_map::ElementMap;
// The same element and page makers as the perception tests'.
use super::perception_tests::{el, page};
use super::snapshot::{Element, Snapshot};

fn list(s: &Snapshot) -> String {
    ElementMap::build(s, None).render(s, 20_000).text
}

fn line_of(text: &str, id: u32) -> &str {
    let start = format!("[{id}] ");
    text.lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_default()
}

#[test]
fn identical_items_laid_out_as_a_grid_get_their_row_and_column() {
    // A 5×5 board of identical green circles: ranks ("12th of 25") would not tell a model
    // which is row 3, column 2.
    let dots: Vec<Element> = (0..25)
        .map(|i| {
            let (row, col) = (f64::from(i / 5), f64::from(i % 5));
            el(
                &format!("d.{i}"),
                json!({"tag": "circle", "fill": "rgb(51, 170, 119)", "at": [col as i32 * 20 + 10, row as i32 * 20 + 10],
                       "bbox": {"x": 20.0 + col * 60.0, "y": 20.0 + row * 60.0, "width": 44.0, "height": 44.0}}),
            )
        })
        .collect();
    let text = list(&page(dots));
    // Document order row by row: the 12th circle is row 3, column 2.
    assert!(line_of(&text, 12).ends_with("(row 3, column 2)"), "{text}");
    assert!(!text.contains(" of 25)"), "{text}");
    // The grid says the place: the drawing's percentages would only repeat it.
    assert!(!text.contains("% of the drawing"), "{text}");
}

#[test]
fn a_column_of_namesakes_keeps_its_rank_and_look_alike_shapes_say_where_they_are() {
    let rows: Vec<Element> = (0..4)
        .map(|i| {
            el(
                &format!("d.{i}"),
                json!({"tag": "button", "name": "Reply", "bbox": {"x": 10.0, "y": 10.0 + f64::from(i) * 50.0, "width": 60.0, "height": 30.0}}),
            )
        })
        .chain([
            el(
                "d.8",
                json!({"tag": "rect", "fill": "rgb(0, 119, 0)", "at": [20, 50]}),
            ),
            el(
                "d.9",
                json!({"tag": "rect", "fill": "rgb(0, 119, 0)", "at": [78, 50], "bbox": {"x": 300.0, "y": 10.0, "width": 40.0, "height": 40.0}}),
            ),
            el(
                "d.10",
                json!({"tag": "circle", "fill": "rgb(220, 38, 38)", "at": [50, 50]}),
            ),
        ])
        .collect();
    let text = list(&page(rows));
    assert!(line_of(&text, 2).ends_with("(2nd of 4)"), "{text}");
    assert!(
        line_of(&text, 6).ends_with(" at 78%, 50% of the drawing"),
        "{text}"
    );
    // A shape no other looks like needs no place: its colour tells it apart.
    assert_eq!(line_of(&text, 7), "[7] circle red 40×40");
}

#[test]
fn cells_say_their_headers_marks_grips_and_hover_only_targets_say_so() {
    let s = page(vec![
        el(
            "d.1",
            json!({"role": "gridcell", "cell": {"row": 6, "column": 2, "rowHeader": "2 pm", "columnHeader": "Tue"}}),
        ),
        el(
            "d.2",
            json!({"role": "gridcell", "cell": {"row": 6, "column": 3, "rowHeader": "2 pm", "columnHeader": "Wed"}, "bbox": {"x": 60.0, "y": 10.0, "width": 40.0, "height": 40.0}}),
        ),
        el("d.3", json!({"tag": "div", "name": "Cell 5", "shows": "x"})),
        el(
            "d.4",
            json!({"tag": "div", "name": "resizable handle", "interactive": ["drag"]}),
        ),
        el(
            "d.5",
            json!({"tag": "textarea", "implicitRole": "textbox", "name": "Comment", "interactive": ["native"], "resizable": true}),
        ),
        el(
            "d.6",
            json!({"name": "Shipping details", "hoverOnly": true}),
        ),
        // A data table's named link needs no place: its name tells it apart.
        el(
            "d.7",
            json!({"tag": "a", "implicitRole": "link", "name": "Item 3", "cell": {"row": 3, "column": 1}}),
        ),
    ]);
    let text = list(&s);
    assert_eq!(
        line_of(&text, 1),
        "[1] gridcell (row \"2 pm\", column \"Tue\")"
    );
    assert_eq!(
        line_of(&text, 2),
        "[2] gridcell (row \"2 pm\", column \"Wed\")"
    );
    assert_eq!(line_of(&text, 3), "[3] div \"Cell 5\" shows \"x\"");
    assert_eq!(line_of(&text, 4), "[4] div \"resizable handle\" (drag it)");
    assert_eq!(line_of(&text, 5), "[5] textbox \"Comment\" resizable");
    assert_eq!(
        line_of(&text, 6),
        "[6] span \"Shipping details\" (reacts to hover)"
    );
    assert_eq!(line_of(&text, 7), "[7] link \"Item 3\"");
}

#[test]
fn a_rank_counts_every_namesake_offered_not_only_those_that_fit() {
    // Thirty "Reply" buttons, in the viewport, with room for a few lines only: the last line
    // shown still says its place among all thirty.
    let rows: Vec<Element> = (0..30)
        .map(|i| {
            el(
                &format!("d.{i}"),
                json!({"tag": "button", "name": "Reply", "bbox": {"x": 10.0, "y": 10.0 + f64::from(i) * 18.0, "width": 60.0, "height": 16.0}}),
            )
        })
        .collect();
    let s = page(rows);
    let text = ElementMap::build(&s, None).render(&s, 700).text;
    assert!(line_of(&text, 2).ends_with("(2nd of 30)"), "{text}");
}

#[test]
fn a_rank_in_a_long_list_counts_every_look_alike_of_the_list_not_only_the_described() {
    // Rows 141–150 of 200 identical log rows are described (the rest are far and brief): each
    // says its place among all 200, as the driver counted them.
    let rows: Vec<Element> = (141..=150)
        .map(|n| {
            el(
                &format!("d.{n}"),
                json!({"tag": "div", "text": "Connection reset", "among": [n, 200],
                       "bbox": {"x": 10.0, "y": 10.0 + f64::from(n - 141) * 24.0, "width": 300.0, "height": 22.0}}),
            )
        })
        .collect();
    let text = list(&page(rows));
    assert!(line_of(&text, 10).ends_with("(150th of 200)"), "{text}");
    assert!(line_of(&text, 1).ends_with("(141st of 200)"), "{text}");

    // A namesake outside the list: the list's count would not be the namesakes'; their rank
    // among those offered then.
    let mut rows: Vec<Element> = (1..=3)
        .map(|n| {
            el(
                &format!("d.{n}"),
                json!({"tag": "div", "text": "Connection reset", "among": [n, 200],
                       "bbox": {"x": 10.0, "y": 10.0 + f64::from(n) * 24.0, "width": 300.0, "height": 22.0}}),
            )
        })
        .collect();
    rows.push(el(
        "d.9",
        json!({"tag": "div", "text": "Connection reset", "bbox": {"x": 10.0, "y": 200.0, "width": 300.0, "height": 22.0}}),
    ));
    let text = list(&page(rows));
    assert!(line_of(&text, 3).ends_with("(3rd of 4)"), "{text}");
    assert!(line_of(&text, 4).ends_with("(4th of 4)"), "{text}");
}

#[test]
fn pins_scattered_over_a_board_say_where_they_are_not_a_row_and_column() {
    // Six identical pins placed by absolute position on a map: each its own row and column,
    // which is no grid; where each is on the board tells them apart.
    let spots = [(10, 15), (85, 10), (40, 50), (70, 80), (20, 70), (55, 30)];
    let pins: Vec<Element> = spots
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            el(
                &format!("d.{i}"),
                json!({"tag": "button", "name": "Pin", "at": [x, y],
                       "bbox": {"x": f64::from(x) * 6.0, "y": f64::from(y) * 4.0, "width": 24.0, "height": 24.0}}),
            )
        })
        .collect();
    let text = list(&page(pins));
    assert!(
        line_of(&text, 2).ends_with(" at 85%, 10% of the drawing"),
        "{text}"
    );
    assert!(!text.contains("(row"), "{text}");

    // Slides stacked in one spot of their carousel: the same place tells them not apart.
    let slides: Vec<Element> = (0..3)
        .map(|i| {
            el(
                &format!("d.{i}"),
                json!({"tag": "div", "name": "Slide", "at": [50, 50]}),
            )
        })
        .collect();
    let text = list(&page(slides));
    assert!(line_of(&text, 2).ends_with("(2nd of 3)"), "{text}");
}
