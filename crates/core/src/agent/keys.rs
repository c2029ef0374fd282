//! Where a key pressed without an element goes: to what has focus, as a person's key does.
//! The worker names that element before anything is checked, so that a key which activates
//! (Enter, Space) is judged as an action on the focused control (a "Pay now" button asks
//! first) rather than on "the page".

use super::actions::{activates, Action};
use super::element_map::ElementMap;
use super::snapshot::Snapshot;

/// `action`, with a `press` of Enter or Space that names no element aimed at the listed
/// element that has focus (unchanged when none is listed: the key goes to the page).
pub fn aim_at_focus(action: Action, map: &ElementMap, snapshot: &Snapshot) -> Action {
    match action {
        Action::Press { element: None, key } if activates(&key) => {
            let focused = map.entries().iter().find(|e| {
                snapshot
                    .elements
                    .get(e.signature.index)
                    .is_some_and(|el| el.focused)
            });
            Action::Press {
                element: focused.map(|e| e.id),
                key,
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(focused: bool) -> Snapshot {
        crate::json::from_value(json!({
            "docId": "d", "url": "https://shop.example/", "title": "Shop",
            "scroll": {"x": 0.0, "y": 0.0}, "viewport": {"width": 800.0, "height": 600.0},
            "page": {"width": 800.0, "height": 600.0}, "frames": [], "truncated": false,
            "elements": [
                {"handle": "d.1", "tag": "a", "name": "Help", "attrs": {"href": "/help"},
                 "bbox": {"x": 0.0, "y": 0.0, "width": 40.0, "height": 20.0},
                 "visible": true, "inViewport": true, "interactive": ["native"]},
                {"handle": "d.2", "tag": "button", "name": "Pay now", "attrs": {},
                 "bbox": {"x": 0.0, "y": 40.0, "width": 80.0, "height": 20.0},
                 "visible": true, "inViewport": true, "interactive": ["native"], "focused": focused}
            ]
        }))
        .expect("a snapshot")
    }

    #[test]
    fn enter_without_an_element_is_the_focused_elements() {
        let s = page(true);
        let map = ElementMap::build(&s, None);
        let enter = Action::Press {
            element: None,
            key: "Enter".into(),
        };
        assert_eq!(
            aim_at_focus(enter.clone(), &map, &s),
            Action::Press {
                element: Some(2),
                key: "Enter".into()
            }
        );
        // Nothing focused is listed: the page's.
        let none = page(false);
        assert_eq!(
            aim_at_focus(enter, &ElementMap::build(&none, None), &none),
            Action::Press {
                element: None,
                key: "Enter".into()
            }
        );
        // Other keys stay the page's (Escape closing a popup).
        let escape = Action::Press {
            element: None,
            key: "Escape".into(),
        };
        assert_eq!(aim_at_focus(escape.clone(), &map, &s), escape);
    }
}
