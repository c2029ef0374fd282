//! The `look` action's browser side: the viewport of the task's tab through
//! `chrome.tabs.captureVisibleTab`, scaled and marked with the element list's numbers on an
//! `OffscreenCanvas` in the worker (never in the page's DOM, where the page could read or
//! move them), as a JPEG `data:` URL; and how much of the viewport pictures without a text
//! alternative cover, for the automatic look. What to draw and when is core's
//! (`tandem_core::agent::look`, `tandem_core::vision`).
//!
//! Chrome captures what a window shows: the task's tab must be the active tab of its window
//! (it is, unless the person switched tabs); otherwise no screenshot is taken and the model
//! is told why. `captureVisibleTab` needs the `<all_urls>` host permission (`activeTab`
//! does not last through a task's navigations). It is PNG (lossless) from Chrome, JPEG at
//! quality 0.8 to the model: about 60–120 KB for a 1024×576 page instead of 300 KB and more.

use js_sys::{Array, Function, Reflect, Uint8Array};
use tandem_chrome::js_text;
use tandem_core::agent::look::{marks, Shot};
use tandem_core::agent::{ElementMap, Snapshot};
use tandem_core::session::ProviderId;
use tandem_core::vision::{base64, image_tokens_for, shot_size, NANO_IMAGE_TOKENS};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::page::{get_tab, note_image, run_func};

#[wasm_bindgen(inline_js = "
// Runs in the page (executeScript sends its source alone): the share of the viewport that
// canvases, images, SVGs and videos without a text alternative cover (overlaps counted
// twice, capped at 1). Icons (under 48 px a side) and hidden ones do not count.
function mediaCover() {
  const vw = innerWidth, vh = innerHeight;
  if (!vw || !vh) return 0;
  const said = (el) => {
    const aria = (el.getAttribute('aria-label') || '').trim() || (el.getAttribute('aria-labelledby') || '').trim();
    if (aria) return true;
    const tag = el.localName;
    if (tag === 'img') return (el.getAttribute('alt') || '').trim() !== '';
    if (tag === 'svg') return !!(el.querySelector(':scope > title') && el.querySelector(':scope > title').textContent.trim());
    if (tag === 'canvas') return el.textContent.trim() !== '';
    return false;
  };
  let area = 0;
  for (const el of document.querySelectorAll('canvas, img, svg, video, embed, object')) {
    if (el.localName === 'svg' && el.parentElement && el.parentElement.closest('svg')) continue;
    const r = el.getBoundingClientRect();
    const w = Math.min(r.right, vw) - Math.max(r.left, 0);
    const h = Math.min(r.bottom, vh) - Math.max(r.top, 0);
    if (w < 48 || h < 48 || said(el)) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || Number(st.opacity) === 0) continue;
    area += w * h;
  }
  return Math.min(1, area / (vw * vh));
}
export function media_cover_fn() { return mediaCover; }

const PALETTE = ['#d0021b', '#0050d8', '#008a3e', '#a0009a', '#c65a00', '#006d77'];

// The visible viewport of window `windowId`, drawn at width × height with each mark
// ([id, x, y, w, h] flattened) outlined and numbered, as JPEG bytes.
export async function shoot(windowId, width, height, marks) {
  const url = await chrome.tabs.captureVisibleTab(windowId, { format: 'png' });
  const bitmap = await createImageBitmap(await (await fetch(url)).blob());
  const canvas = new OffscreenCanvas(width, height);
  const g = canvas.getContext('2d');
  g.imageSmoothingQuality = 'high';
  g.drawImage(bitmap, 0, 0, width, height);
  bitmap.close();
  g.lineWidth = 2;
  g.font = 'bold 12px sans-serif';
  g.textBaseline = 'top';
  for (let i = 0; i + 4 < marks.length; i += 5) {
    const [id, x, y, w, h] = [marks[i], marks[i + 1], marks[i + 2], marks[i + 3], marks[i + 4]];
    const colour = PALETTE[id % PALETTE.length];
    g.strokeStyle = colour;
    g.strokeRect(x + 1, y + 1, Math.max(w - 2, 1), Math.max(h - 2, 1));
    const label = String(id);
    const lw = Math.ceil(g.measureText(label).width) + 6;
    // Inside the box's top-left corner, or above it when the box is too small to hold it.
    const ly = h >= 32 ? y : Math.max(y - 16, 0);
    g.fillStyle = colour;
    g.fillRect(x, ly, lw, 16);
    g.fillStyle = '#fff';
    g.fillText(label, x + 3, ly + 2);
  }
  const out = await canvas.convertToBlob({ type: 'image/jpeg', quality: 0.8 });
  return new Uint8Array(await out.arrayBuffer());
}
")]
extern "C" {
    fn media_cover_fn() -> Function;
    #[wasm_bindgen(catch)]
    fn shoot(
        window_id: i32,
        width: u32,
        height: u32,
        marks: &Array,
    ) -> Result<js_sys::Promise, JsValue>;
}

/// The share of the tab's viewport covered by pictures without a text alternative; 0 when
/// it cannot be measured (the automatic look then does not happen).
pub(super) async fn media_cover(tab: i32) -> f64 {
    run_func(tab, &media_cover_fn(), &Array::new())
        .await
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|f| f.is_finite())
        .unwrap_or(0.0)
}

/// A screenshot of the tab's viewport as `snapshot` saw it, marked with `map`'s numbers, for
/// `provider`: its `data:` URL and geometry, or why none was taken (a sentence for the model).
pub(super) async fn take(
    tab: i32,
    snapshot: &Snapshot,
    map: &ElementMap,
    provider: ProviderId,
) -> Result<(String, Shot), String> {
    let started = js_sys::Date::now();
    let info = get_tab(tab).await?;
    let active = Reflect::get(&info, &"active".into())
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if !active {
        return Err("the task's tab is not the one shown in its window, and Chrome captures only what a window shows".into());
    }
    let window = Reflect::get(&info, &"windowId".into())
        .ok()
        .and_then(|v| v.as_f64())
        .ok_or("Chrome did not say which window shows the tab")?;
    let (width, height) = shot_size(snapshot.viewport.width, snapshot.viewport.height);
    let tokens = match provider {
        ProviderId::Nano => NANO_IMAGE_TOKENS,
        ProviderId::Cloud(kind) => image_tokens_for(kind, width, height),
    };
    let shot = Shot::of(snapshot, width, height, tokens);
    let flat = Array::new();
    for m in marks(map, snapshot, &shot) {
        for v in [f64::from(m.id), m.x, m.y, m.width, m.height] {
            flat.push(&v.into());
        }
    }
    // `as` saturates; a window id is a small whole number.
    let promise = shoot(window as i32, width, height, &flat).map_err(js_text)?;
    let bytes = JsFuture::from(promise).await.map_err(js_text)?;
    let bytes = Uint8Array::new(&bytes).to_vec();
    if bytes.is_empty() {
        return Err("Chrome gave an empty screenshot".into());
    }
    let url = format!("data:image/jpeg;base64,{}", base64(&bytes));
    note_image(tokens, (js_sys::Date::now() - started).max(0.0));
    Ok((url, shot))
}
