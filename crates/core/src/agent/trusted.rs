//! Trusted input: the Chrome DevTools Protocol input events (`Input.dispatchMouseEvent`,
//! `Input.dispatchKeyEvent`, `Input.dispatchDragEvent`) that repeat a hover, drag or key the
//! page ignored when the driver sent it as script events (`event.isTrusted` is false for
//! those; CSS `:hover` never follows them). The worker sends them through `chrome.debugger`,
//! which makes Chrome show that the browser is being debugged, so only for an action the
//! page did not react to, once, and said in the step's result (`RETRY_NOTE`).
//!
//! Pure: the events as JSON for the worker to send, tested natively.

use crate::json;
use serde_json::Value;

// The aim is what the driver reports with an act, so it is the snapshot's type.
pub use super::snapshot::Aim;
use super::snapshot::DriverCommand;

/// Said before the result of an action repeated as trusted input.
pub const RETRY_NOTE: &str =
    "the page ignored script events, so Tandem repeated it as real input through Chrome's debugger (Chrome shows a \"debugging this browser\" bar meanwhile)";

/// One step of a trusted repeat.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// `chrome.debugger.sendCommand(method, params)`.
    Send { method: &'static str, params: Value },
    /// Waits for the `Input.dragIntercepted` event of the drag begun by the steps before it,
    /// then sends `dragEnter`, `dragOver` and `drop` at `at` with its data.
    DropAt { at: [f64; 2] },
}

/// One `Input.dispatchMouseEvent`: the left button's and the right's differ only in these.
fn dispatch(kind: &str, [x, y]: [f64; 2], button: &str, buttons: u8, click_count: u8) -> Step {
    Step::Send {
        method: "Input.dispatchMouseEvent",
        params: json!({
            "type": kind,
            "x": x,
            "y": y,
            "button": button,
            "buttons": buttons,
            "clickCount": click_count,
        }),
    }
}

/// The pointer moved (`mouseMoved`), or the left button pressed or released, at `at`.
fn mouse(kind: &str, at: [f64; 2], pressed: bool) -> Step {
    let moved = kind == "mouseMoved";
    let button = if pressed || !moved { "left" } else { "none" };
    dispatch(kind, at, button, u8::from(pressed), u8::from(!moved))
}

/// A left click at `at`: the pointer moved there, pressed, released.
fn left_click(at: [f64; 2]) -> Vec<Step> {
    vec![
        mouse("mouseMoved", at, false),
        mouse("mousePressed", at, true),
        mouse("mouseReleased", at, false),
    ]
}

/// The right button pressed or released at `at`.
fn right(at: [f64; 2], kind: &str) -> Step {
    let buttons = if kind == "mousePressed" { 2 } else { 0 };
    dispatch(kind, at, "right", buttons, 1)
}

/// The steps that repeat `command` as trusted input, or `None` for a command that is not
/// repeated. A click is repeated only when it was a menu item's that changed nothing outside
/// its menu (elsewhere it may have done something invisible: repeating could do it twice).
pub fn steps(command: &DriverCommand, aim: &Aim) -> Option<Vec<Step>> {
    match command {
        DriverCommand::Hover => Some(vec![mouse("mouseMoved", aim.from, false)]),
        // A menu item whose click changed nothing outside its menu (`Changes::menu_only`):
        // its menu opened again at `from` when it closed, then the item clicked at `to`.
        DriverCommand::Click => {
            let mut out = left_click(aim.from);
            if let Some(to) = aim.to {
                out.extend(left_click(to));
            }
            Some(out)
        }
        // Chrome opens the page's `contextmenu` on the right button's press, as for a hand.
        DriverCommand::ContextClick => Some(vec![
            mouse("mouseMoved", aim.from, false),
            right(aim.from, "mousePressed"),
            right(aim.from, "mouseReleased"),
        ]),
        DriverCommand::Drag { .. } => {
            let to = aim.to?;
            let mut out = vec![
                mouse("mouseMoved", aim.from, false),
                mouse("mousePressed", aim.from, true),
            ];
            if aim.html5 {
                out.insert(
                    0,
                    Step::Send {
                        method: "Input.setInterceptDrags",
                        params: json!({"enabled": true}),
                    },
                );
            }
            // In steps, as a hand moves: pages start a drag after a few pixels of movement.
            const MOVES: u32 = 8;
            for i in 1..=MOVES {
                let f = f64::from(i) / f64::from(MOVES);
                let at = [
                    aim.from[0] + (to[0] - aim.from[0]) * f,
                    aim.from[1] + (to[1] - aim.from[1]) * f,
                ];
                out.push(mouse("mouseMoved", at, true));
            }
            if aim.html5 {
                out.push(Step::DropAt { at: to });
            }
            out.push(mouse("mouseReleased", to, true));
            if aim.html5 {
                out.push(Step::Send {
                    method: "Input.setInterceptDrags",
                    params: json!({"enabled": false}),
                });
            }
            Some(out)
        }
        DriverCommand::Press { key } => {
            let k = Key::parse(key)?;
            let mut down = json!({
                "type": if k.text.is_some() { "keyDown" } else { "rawKeyDown" },
                "key": k.key,
                "code": k.code,
                "windowsVirtualKeyCode": k.key_code,
                "modifiers": k.modifiers,
            });
            if let Some(text) = &k.text {
                down["text"] = text.as_str().into();
            }
            let up = json!({
                "type": "keyUp",
                "key": k.key,
                "code": k.code,
                "windowsVirtualKeyCode": k.key_code,
                "modifiers": k.modifiers,
            });
            Some(vec![
                Step::Send {
                    method: "Input.dispatchKeyEvent",
                    params: down,
                },
                Step::Send {
                    method: "Input.dispatchKeyEvent",
                    params: up,
                },
            ])
        }
        _ => None,
    }
}

/// The drag events that drop the intercepted `data` at `at`.
pub fn drop_events(at: [f64; 2], data: &Value) -> Vec<Step> {
    ["dragEnter", "dragOver", "drop"]
        .into_iter()
        .map(|kind| Step::Send {
            method: "Input.dispatchDragEvent",
            params: json!({"type": kind, "x": at[0], "y": at[1], "data": data}),
        })
        .collect()
}

/// A key or chord as `press` takes it, in CDP's terms.
#[derive(Debug, PartialEq)]
struct Key {
    key: String,
    code: String,
    key_code: u32,
    /// Alt 1, Ctrl 2, Meta 4, Shift 8.
    modifiers: u32,
    /// The character typed, for a printable key without Ctrl/Alt/Meta (and `\r` for Enter).
    text: Option<String>,
}

impl Key {
    fn parse(chord: &str) -> Option<Key> {
        let chord = chord.trim();
        let parts: Vec<&str> = if chord == "+" {
            vec!["+"]
        } else {
            chord.split('+').map(str::trim).collect()
        };
        let (last, mods) = parts.split_last()?;
        let mut modifiers = 0;
        for m in mods {
            modifiers |= match m.to_ascii_lowercase().as_str() {
                "alt" | "option" => 1,
                "control" | "ctrl" => 2,
                "meta" | "cmd" | "command" => 4,
                "shift" => 8,
                _ => return None,
            };
        }
        let named = |key: &str, code: u32| (key.to_owned(), key.to_owned(), code);
        let (key, code, key_code) = match last.to_ascii_lowercase().as_str() {
            "enter" | "return" => named("Enter", 13),
            "escape" | "esc" => named("Escape", 27),
            "tab" => named("Tab", 9),
            "space" | "spacebar" => (" ".into(), "Space".into(), 32),
            "backspace" => named("Backspace", 8),
            "delete" | "del" => named("Delete", 46),
            "arrowup" | "up" => named("ArrowUp", 38),
            "arrowdown" | "down" => named("ArrowDown", 40),
            "arrowleft" | "left" => named("ArrowLeft", 37),
            "arrowright" | "right" => named("ArrowRight", 39),
            "home" => named("Home", 36),
            "end" => named("End", 35),
            "pageup" => named("PageUp", 33),
            "pagedown" => named("PageDown", 34),
            other => {
                let mut chars = other.chars();
                let c = chars.next()?;
                if chars.next().is_some() {
                    return None;
                }
                let upper = c.to_ascii_uppercase();
                let key = if modifiers & 8 != 0 { upper } else { c };
                let code = match upper {
                    'A'..='Z' => format!("Key{upper}"),
                    '0'..='9' => format!("Digit{upper}"),
                    _ => String::new(),
                };
                let key_code = if upper.is_ascii_alphanumeric() {
                    u32::from(upper)
                } else {
                    0
                };
                (key.to_string(), code, key_code)
            }
        };
        let plain = modifiers & (1 | 2 | 4) == 0;
        let text = match key.as_str() {
            "Enter" if plain => Some("\r".to_owned()),
            k if plain && k.chars().count() == 1 => Some(k.to_owned()),
            _ => None,
        };
        Some(Key {
            key,
            code,
            key_code,
            modifiers,
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn methods(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Send { method, params } => {
                    format!("{method} {}", params["type"].as_str().unwrap_or(""))
                }
                Step::DropAt { .. } => "drop".into(),
            })
            .collect()
    }

    #[test]
    fn only_hover_drag_and_keys_are_repeated() {
        let aim = Aim {
            from: [10.0, 20.0],
            to: Some([110.0, 20.0]),
            html5: false,
        };
        // A click is repeated only when the report says a menu ignored it (`report::ignored`).
        assert!(steps(&DriverCommand::ClickAt { x: 1, y: 1 }, &aim).is_none());
        let hover = steps(&DriverCommand::Hover, &aim).unwrap_or_default();
        assert_eq!(methods(&hover), ["Input.dispatchMouseEvent mouseMoved"]);
        let drag = DriverCommand::Drag {
            to: None,
            dx: 0,
            dy: 0,
        };
        let plain = methods(&steps(&drag, &aim).unwrap_or_default());
        assert_eq!(
            plain.first().map(String::as_str),
            Some("Input.dispatchMouseEvent mouseMoved")
        );
        assert_eq!(plain[1], "Input.dispatchMouseEvent mousePressed");
        assert_eq!(
            plain.last().map(String::as_str),
            Some("Input.dispatchMouseEvent mouseReleased")
        );
        assert!(!plain.iter().any(|m| m.contains("Intercept") || m == "drop"));
        let html5 = methods(&steps(&drag, &Aim { html5: true, ..aim }).unwrap_or_default());
        assert_eq!(html5[0], "Input.setInterceptDrags ");
        assert!(html5.iter().any(|m| m == "drop"));
        assert!(
            steps(&drag, &Aim { to: None, ..aim }).is_none(),
            "a drag needs its end"
        );
    }

    #[test]
    fn keys_and_chords_in_cdp_terms() {
        let k = Key::parse("Control+A").expect("chord");
        assert_eq!(
            (k.key.as_str(), k.code.as_str(), k.key_code, k.modifiers),
            ("a", "KeyA", 65, 2)
        );
        assert_eq!(k.text, None, "a chord types nothing");
        let e = Key::parse("Escape").expect("key");
        assert_eq!((e.key_code, e.text), (27, None));
        assert_eq!(Key::parse("Enter").map(|k| k.text), Some(Some("\r".into())));
        assert_eq!(Key::parse("Shift+x").map(|k| k.key), Some("X".into()));
        assert_eq!(Key::parse("Hyper+A"), None);
        assert_eq!(Key::parse("NotAKey"), None);
    }

    #[test]
    fn a_right_click_and_an_ignored_menu_item_are_repeated_with_the_right_buttons() {
        let said = |steps: Vec<Step>| -> Vec<String> {
            steps
                .into_iter()
                .map(|s| match s {
                    Step::Send { params, .. } => format!(
                        "{} {}",
                        params["type"].as_str().unwrap_or(""),
                        params["button"].as_str().unwrap_or("")
                    ),
                    Step::DropAt { .. } => "drop".into(),
                })
                .collect()
        };
        let aim = Aim {
            from: [10.0, 10.0],
            to: None,
            html5: false,
        };
        let right = steps(&DriverCommand::ContextClick, &aim).unwrap_or_default();
        assert_eq!(
            said(right),
            [
                "mouseMoved none",
                "mousePressed right",
                "mouseReleased right"
            ]
        );
        // The menu closed: opened again at `from`, then its item clicked at `to`.
        let reopen = Aim {
            to: Some([40.0, 80.0]),
            ..aim
        };
        let menu = steps(&DriverCommand::Click, &reopen).unwrap_or_default();
        assert_eq!(said(menu).len(), 6);
    }
}
