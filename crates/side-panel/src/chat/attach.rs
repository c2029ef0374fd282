//! Images attached to the next message: picked with the "Attach image" file input, read as
//! `data:` URLs, shown as removable thumbnails, and sent with the message.

use std::cell::RefCell;

use js_sys::Promise;
use tandem_core::i18n::text;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{File, FileReader, HtmlElement, HtmlInputElement};

use crate::dom::{self, DomError};
use crate::i18n::say;

/// Providers cap image size around 5 MB (Anthropic) to 20 MB; the smallest cap is kept.
const MAX_BYTES: f64 = 5.0 * 1024.0 * 1024.0;
const MAX_IMAGES: usize = 4;

thread_local! {
    static PENDING: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

pub fn wire() -> Result<(), DomError> {
    let input: HtmlInputElement = dom::by_id("attach")?;
    let picker = input.clone();
    dom::on("attach", "change", move |_: web_sys::Event| {
        let files: Vec<File> = picker
            .files()
            .map(|list| (0..list.length()).filter_map(|i| list.get(i)).collect())
            .unwrap_or_default();
        // The same file can be picked again after it was removed.
        picker.set_value("");
        spawn_local(async move {
            for file in files {
                if let Err(problem) = add(&file).await {
                    crate::alert::show_error(&problem);
                }
            }
            render();
        });
    })?;
    // Each thumbnail's ×: one listener for the list, which is rebuilt at every change. The
    // button says which image it removes.
    dom::on_each(
        "attachments",
        "button.remove[data-index]",
        "click",
        |button, _: web_sys::Event| {
            let index = button
                .get_attribute("data-index")
                .and_then(|i| i.parse::<usize>().ok());
            if let Some(i) = index {
                PENDING.with(|p| {
                    let mut p = p.borrow_mut();
                    if i < p.len() {
                        p.remove(i);
                    }
                });
                render();
            }
        },
    )
}

async fn add(file: &File) -> Result<(), String> {
    let name = file.name();
    if !file.type_().starts_with("image/") {
        return Err(say("chatAttachNotImage", vec![text(&name)]));
    }
    if file.size() > MAX_BYTES {
        return Err(say("chatAttachTooLarge", vec![text(&name)]));
    }
    if PENDING.with(|p| p.borrow().len()) >= MAX_IMAGES {
        return Err(say("chatAttachTooMany", vec![text(MAX_IMAGES.to_string())]));
    }
    let url = read_data_url(file)
        .await
        .map_err(|e| say("chatAttachUnreadable", vec![text(&name), text(e)]))?;
    PENDING.with(|p| p.borrow_mut().push(url));
    Ok(())
}

async fn read_data_url(file: &File) -> Result<String, String> {
    let reader = FileReader::new().map_err(tandem_chrome::js_text)?;
    let done = Promise::new(&mut |resolve, reject| {
        let r = reader.clone();
        let on_load = Closure::once_into_js(move || {
            let _ = resolve.call1(&JsValue::NULL, &r.result().unwrap_or(JsValue::NULL));
        });
        let on_error = Closure::once_into_js(move || {
            let _ = reject.call1(&JsValue::NULL, &"read error".into());
        });
        reader.set_onload(Some(on_load.unchecked_ref()));
        reader.set_onerror(Some(on_error.unchecked_ref()));
    });
    reader
        .read_as_data_url(file)
        .map_err(tandem_chrome::js_text)?;
    let value = JsFuture::from(done).await.map_err(tandem_chrome::js_text)?;
    value.as_string().ok_or_else(|| "no data".to_string())
}

/// The images for the message being sent; the thumbnails go away.
pub fn take() -> Vec<String> {
    let images = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    render();
    images
}

/// A send that got no answer gives its images back, like its text.
pub fn restore(images: Vec<String>) {
    if images.is_empty() {
        return;
    }
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if p.is_empty() {
            *p = images;
        }
    });
    render();
}

fn render() {
    let Ok(list) = dom::by_id::<HtmlElement>("attachments") else {
        return;
    };
    list.set_inner_html("");
    let images = PENDING.with(|p| p.borrow().clone());
    list.set_hidden(images.is_empty());
    for (i, url) in images.iter().enumerate() {
        let (Ok(item), Ok(img), Ok(remove)) = (
            dom::create("div", "attachment"),
            dom::create("img", ""),
            dom::create("button", "remove"),
        ) else {
            continue;
        };
        dom::set_attr(&item, "role", "listitem");
        dom::set_attr(&img, "src", url);
        dom::set_attr(
            &img,
            "alt",
            &say("chatAttachedImage", vec![text((i + 1).to_string())]),
        );
        dom::set_attr(&remove, "type", "button");
        dom::set_attr(
            &remove,
            "aria-label",
            &say("chatRemoveImage", vec![text((i + 1).to_string())]),
        );
        remove.set_text_content(Some("×"));
        dom::set_attr(&remove, "data-index", &i.to_string());
        let _ = item.append_child(&img);
        let _ = item.append_child(&remove);
        let _ = list.append_child(&item);
    }
}

/// Thumbnails inside a sent message's bubble.
pub fn show_in(bubble: &HtmlElement, images: &[String]) {
    for (i, url) in images.iter().enumerate() {
        if let Ok(img) = dom::create("img", "sent-image") {
            dom::set_attr(&img, "src", url);
            dom::set_attr(
                &img,
                "alt",
                &say("chatSentImage", vec![text((i + 1).to_string())]),
            );
            let _ = bubble.append_child(&img);
        }
    }
}
