//! The panel's half of the Firebase AI Logic relay (see the worker's `relay` module): it
//! performs the HTTP exchange the worker prepared and streams the response back, decoded as
//! UTF-8 without splitting a character across messages. No decision is made here.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::Uint8Array;
use tandem_chrome::js_text;
use tandem_core::protocol::{PanelToWorker, WorkerToPanel};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    AbortController, ReadableStreamDefaultReader, Request, RequestInit, Response,
    TextDecodeOptions, TextDecoder,
};

use crate::port::post;

thread_local! {
    static RUNNING: RefCell<HashMap<String, AbortController>> = RefCell::new(HashMap::new());
}

/// The worker's fetches to perform (or to abort).
pub(crate) fn receive(message: WorkerToPanel) {
    match message {
        WorkerToPanel::Fetch {
            fetch_id,
            url,
            headers,
            body,
        } => fetch(fetch_id, url, headers, body),
        WorkerToPanel::FetchAbort { fetch_id } => abort(&fetch_id),
        _ => {}
    }
}

fn abort(fetch_id: &str) {
    if let Some(c) = RUNNING.with(|r| r.borrow_mut().remove(fetch_id)) {
        c.abort();
    }
}

fn fetch(fetch_id: String, url: String, headers: Vec<(String, String)>, body: String) {
    spawn_local(async move {
        let error = run(&fetch_id, &url, &headers, &body).await.err();
        RUNNING.with(|r| r.borrow_mut().remove(&fetch_id));
        let _ = post(&PanelToWorker::FetchEnd { fetch_id, error });
    });
}

async fn run(
    fetch_id: &str,
    url: &str,
    headers: &[(String, String)],
    body: &str,
) -> Result<(), String> {
    let controller = AbortController::new().map_err(js_text)?;
    RUNNING.with(|r| {
        r.borrow_mut()
            .insert(fetch_id.to_string(), controller.clone())
    });
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&JsValue::from_str(body));
    init.set_signal(Some(&controller.signal()));
    let h = web_sys::Headers::new().map_err(js_text)?;
    for (k, v) in headers {
        h.append(k, v).map_err(js_text)?;
    }
    init.set_headers(&h);
    let request = Request::new_with_str_and_init(url, &init).map_err(js_text)?;
    let window = web_sys::window().ok_or("no window")?;
    let response: Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(js_text)?
        .unchecked_into();
    let retry_after = response.headers().get("retry-after").ok().flatten();
    post(&PanelToWorker::FetchHead {
        fetch_id: fetch_id.to_string(),
        status: response.status(),
        retry_after,
    })?;
    let Some(stream) = response.body() else {
        return Ok(());
    };
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    let decoder = TextDecoder::new().map_err(js_text)?;
    let streaming = TextDecodeOptions::new();
    streaming.set_stream(true);
    loop {
        let Some(value) = tandem_chrome::next_chunk(&reader).await.map_err(js_text)? else {
            break;
        };
        let bytes = Uint8Array::new(&value);
        // `stream: true` keeps a character split across chunks for the next call.
        let text = decoder
            .decode_with_js_u8_array_and_options(&bytes, &streaming)
            .map_err(js_text)?;
        if !text.is_empty() {
            post(&PanelToWorker::FetchChunk {
                fetch_id: fetch_id.to_string(),
                text,
            })?;
        }
    }
    Ok(())
}
