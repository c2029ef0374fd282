//! Gemini Nano through Chrome's Prompt API (the `LanguageModel` global), bound by hand and
//! adapted to `tandem_core::session`'s `NanoBackend` / `NanoModel`. Both the current names
//! (`contextUsage`, `contextWindow`, `contextoverflow`) and the deprecated ones extensions
//! still get (`inputUsage`, `inputQuota`, `quotaoverflow`) are read.
//! Spec: https://webmachinelearning.github.io/prompt-api/

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Promise, Reflect};
use tandem_core::session::{
    Availability, NanoBackend, NanoCreateOptions, NanoError, NanoMessage, NanoModel,
    NanoPromptOptions,
};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, EventTarget, ReadableStreamDefaultReader};

#[wasm_bindgen]
extern "C" {
    /// The `LanguageModel` class (absent where the browser has no Prompt API: calls then
    /// throw a ReferenceError, which `catch` turns into an error value).
    #[wasm_bindgen(js_name = LanguageModel)]
    type LanguageModelClass;

    #[wasm_bindgen(catch, static_method_of = LanguageModelClass, js_class = "LanguageModel", js_name = availability)]
    fn lm_availability(options: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, static_method_of = LanguageModelClass, js_class = "LanguageModel", js_name = create)]
    fn lm_create(options: &JsValue) -> Result<Promise, JsValue>;

    /// A `LanguageModel` session.
    #[wasm_bindgen(extends = EventTarget)]
    #[derive(Clone, Debug)]
    type LmSession;

    #[wasm_bindgen(method, catch)]
    fn prompt(this: &LmSession, input: &JsValue, options: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch, js_name = promptStreaming)]
    fn prompt_streaming(
        this: &LmSession,
        input: &JsValue,
        options: &JsValue,
    ) -> Result<web_sys::ReadableStream, JsValue>;

    #[wasm_bindgen(method)]
    fn destroy(this: &LmSession);

    #[wasm_bindgen(method, catch)]
    fn append(this: &LmSession, input: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn clone(this: &LmSession) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, static_method_of = LanguageModelClass, js_class = "LanguageModel", js_name = params)]
    fn lm_params() -> Result<Promise, JsValue>;
}

/// Hears model download progress, 0.0 to 1.0.
pub type ProgressListener = Rc<dyn Fn(f64)>;

/// The browser's Prompt API.
#[derive(Default)]
pub struct BrowserNano {
    pub on_progress: RefCell<Option<ProgressListener>>,
}

impl NanoBackend for BrowserNano {
    type Model = BrowserModel;

    async fn availability(&self, options: &NanoCreateOptions) -> Result<Availability, NanoError> {
        let value = call(LanguageModelClass::lm_availability(&to_js(options)?)).await?;
        Ok(Availability::parse(&value.as_string().unwrap_or_default()))
    }

    async fn create(&self, options: &NanoCreateOptions) -> Result<BrowserModel, NanoError> {
        let js_options = to_js(options)?;
        let progress = self.on_progress.borrow().clone();
        // `monitor(m)` is how the Prompt API reports a model download.
        let monitor = progress.map(|report| {
            Closure::<dyn FnMut(JsValue)>::new(move |m: JsValue| {
                let report = report.clone();
                let listener = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
                    let loaded = Reflect::get(&e, &"loaded".into())
                        .ok()
                        .and_then(|v| v.as_f64())
                        .unwrap_or(0.0);
                    report(loaded);
                });
                if let Some(target) = m.dyn_ref::<EventTarget>() {
                    let _ = target.add_event_listener_with_callback(
                        "downloadprogress",
                        listener.as_ref().unchecked_ref(),
                    );
                }
                // Lives as long as the monitor may fire: the length of one download.
                listener.forget();
            })
        });
        if let Some(m) = &monitor {
            let _ = Reflect::set(&js_options, &"monitor".into(), m.as_ref());
        }
        let session: LmSession = call(LanguageModelClass::lm_create(&js_options))
            .await?
            .unchecked_into();
        drop(monitor);
        Ok(BrowserModel::new(session))
    }
}

pub struct BrowserModel {
    session: LmSession,
    overflowed: Rc<Cell<bool>>,
    _on_overflow: Closure<dyn FnMut(JsValue)>,
}

impl BrowserModel {
    fn new(session: LmSession) -> Self {
        let overflowed = Rc::new(Cell::new(false));
        let flag = overflowed.clone();
        let on_overflow = Closure::<dyn FnMut(JsValue)>::new(move |_| flag.set(true));
        for event in ["contextoverflow", "quotaoverflow"] {
            let _ = session
                .add_event_listener_with_callback(event, on_overflow.as_ref().unchecked_ref());
        }
        Self {
            session,
            overflowed,
            _on_overflow: on_overflow,
        }
    }

    fn number(&self, names: [&str; 2]) -> f64 {
        names
            .iter()
            .filter_map(|n| Reflect::get(&self.session, &(*n).into()).ok()?.as_f64())
            .next()
            .unwrap_or(0.0)
    }
}

impl NanoModel for BrowserModel {
    async fn prompt(&self, input: &str, options: &NanoPromptOptions) -> Result<String, NanoError> {
        let input = prompt_input(input, &options.images)?;
        let value = call(self.session.prompt(&input, &prompt_options(options)?)).await?;
        Ok(value.as_string().unwrap_or_default())
    }

    async fn prompt_streaming(
        &self,
        input: &str,
        options: &NanoPromptOptions,
        on_chunk: &mut dyn FnMut(&str),
    ) -> Result<String, NanoError> {
        let input = prompt_input(input, &options.images)?;
        let stream = self
            .session
            .prompt_streaming(&input, &prompt_options(options)?)
            .map_err(nano_error)?;
        let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
        let mut text = String::new();
        loop {
            let chunk = tandem_chrome::next_chunk(&reader)
                .await
                .map_err(nano_error)?;
            let Some(value) = chunk else { break };
            // Chrome streams deltas, one piece of text per chunk.
            let piece = value.as_string().unwrap_or_default();
            on_chunk(&piece);
            text.push_str(&piece);
        }
        Ok(text)
    }

    fn context_usage(&self) -> f64 {
        self.number(["contextUsage", "inputUsage"])
    }

    fn context_window(&self) -> f64 {
        self.number(["contextWindow", "inputQuota"])
    }

    fn take_overflow(&self) -> bool {
        self.overflowed.replace(false)
    }

    async fn append(&self, messages: &[NanoMessage]) -> Result<(), NanoError> {
        call(self.session.append(&to_js(&messages)?))
            .await
            .map(|_| ())
    }

    async fn measure_context_usage(
        &self,
        input: &str,
        options: &NanoPromptOptions,
    ) -> Result<f64, NanoError> {
        // The current name first, then the one extensions still get.
        for method in ["measureContextUsage", "measureInputUsage"] {
            let Ok(f) = Reflect::get(&self.session, &method.into()) else {
                continue;
            };
            let Some(f) = f.dyn_ref::<js_sys::Function>() else {
                continue;
            };
            let promise = f
                .call2(&self.session, &input.into(), &prompt_options(options)?)
                .map(|p| p.unchecked_into::<Promise>());
            return call(promise).await.map(|v| v.as_f64().unwrap_or(0.0));
        }
        Err(NanoError::new(
            "NotSupportedError",
            "measureContextUsage is not available",
        ))
    }

    async fn clone_model(&self) -> Result<Self, NanoError> {
        let copy: LmSession = call(self.session.clone()).await?.unchecked_into();
        Ok(BrowserModel::new(copy))
    }

    fn destroy(&self) {
        self.session.destroy();
    }
}

/// A prompt's input: the text alone, or with images one user message whose content is the
/// text part and then an image part per image, each a `Blob` of the `data:` URL's bytes
/// (the Prompt API's `[{role, content: [{type: "text", value}, {type: "image", value}]}]`).
fn prompt_input(text: &str, images: &[String]) -> Result<JsValue, NanoError> {
    if images.is_empty() {
        return Ok(text.into());
    }
    let part = |kind: &str, value: &JsValue| -> Result<JsValue, NanoError> {
        let part = js_sys::Object::new();
        Reflect::set(&part, &"type".into(), &kind.into()).map_err(nano_error)?;
        Reflect::set(&part, &"value".into(), value).map_err(nano_error)?;
        Ok(part.into())
    };
    let content = js_sys::Array::new();
    content.push(&part("text", &text.into())?);
    for url in images {
        let (mime, bytes) = tandem_core::vision::decode_data_url(url).ok_or_else(|| {
            NanoError::new("DataError", "a screenshot was not a base64 data: URL")
        })?;
        let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes.as_slice()));
        let bag = web_sys::BlobPropertyBag::new();
        bag.set_type(&mime);
        let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &bag)
            .map_err(nano_error)?;
        content.push(&part("image", &blob)?);
    }
    let message = js_sys::Object::new();
    Reflect::set(&message, &"role".into(), &"user".into()).map_err(nano_error)?;
    Reflect::set(&message, &"content".into(), &content).map_err(nano_error)?;
    Ok(js_sys::Array::of1(&message).into())
}

fn prompt_options(options: &NanoPromptOptions) -> Result<JsValue, NanoError> {
    let js = to_js(options)?;
    if let Some(ms) = options.timeout_ms {
        // A step that hangs is a failure to fail over from, not a wait forever.
        let signal = AbortSignal::timeout_with_f64(ms as f64);
        let _ = Reflect::set(&js, &"signal".into(), &signal);
    }
    Ok(js)
}

/// Serialises an options struct into the JS dictionary the Prompt API takes.
fn to_js(value: &impl serde::Serialize) -> Result<JsValue, NanoError> {
    let json =
        serde_json::to_string(value).map_err(|e| NanoError::new("DataError", e.to_string()))?;
    js_sys::JSON::parse(&json).map_err(nano_error)
}

async fn call(promise: Result<Promise, JsValue>) -> Result<JsValue, NanoError> {
    JsFuture::from(promise.map_err(nano_error)?)
        .await
        .map_err(nano_error)
}

/// A thrown value as `NanoError { name, message }`: DOMExceptions keep their name, which
/// is what failover decisions read; no Prompt API at all reads as NotSupportedError.
fn nano_error(value: JsValue) -> NanoError {
    let field = |k: &str| {
        Reflect::get(&value, &k.into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    let (name, message) = (field("name"), field("message"));
    if name == "ReferenceError" || name == "TypeError" && message.contains("LanguageModel") {
        return NanoError::new(
            "NotSupportedError",
            "This browser has no Prompt API (LanguageModel).",
        );
    }
    if name.is_empty() {
        return NanoError::new(
            "UnknownError",
            value.as_string().unwrap_or_else(|| format!("{value:?}")),
        );
    }
    NanoError::new(name, message)
}

/// The model's sampling limits (`LanguageModel.params()`), for Settings; `None` when the
/// browser does not say.
pub async fn params() -> Option<serde_json::Value> {
    let value = call(LanguageModelClass::lm_params()).await.ok()?;
    let json = js_sys::JSON::stringify(&value).ok()?;
    tandem_core::json::from_str(&String::from(json)).ok()
}

/// Used by the status query: `true` when the global exists at all.
pub fn prompt_api_present() -> bool {
    Reflect::get(&js_sys::global(), &"LanguageModel".into())
        .map(|v| v.is_function())
        .unwrap_or(false)
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_service_worker);

    // The smallest Prompt-API-shaped global that exercises the bindings: only the
    // deprecated names (inputUsage, inputQuota, measureInputUsage, quotaoverflow), as some
    // Chrome versions expose, and DOMException names on failure.
    #[wasm_bindgen(inline_js = "
        export function install_minimal_prompt_api() {
            class Session extends EventTarget {
                constructor(o) { super(); this.inputUsage = 10; this.inputQuota = 100; this.o = o; this.log = []; }
                async prompt(input) {
                    if (this.gone) throw new DOMException('gone', 'InvalidStateError');
                    if (typeof input === 'string') return 'P:' + input;
                    const part = (p) => p.type + '=' + (p.value instanceof Blob ? p.value.type + '/' + p.value.size : p.value);
                    return input.map((m) => m.role + ':' + m.content.map(part).join(',')).join(';');
                }
                promptStreaming(input) {
                    const parts = ['a', 'é', '世'];
                    return new ReadableStream({ pull(c) { parts.length ? c.enqueue(parts.shift()) : c.close(); } });
                }
                async append(m) { this.log.push(m); this.inputUsage += 5; this.dispatchEvent(new Event('quotaoverflow')); }
                async measureInputUsage(input) { return input.length; }
                async clone() { return new Session(this.o); }
                destroy() { this.gone = true; }
            }
            globalThis.LanguageModel = {
                availability: async () => 'downloadable',
                params: async () => ({ maxTopK: 8, maxTemperature: 2 }),
                create: async (o) => {
                    const m = new EventTarget();
                    o.monitor?.(m);
                    for (const loaded of [0.25, 1]) { const e = new Event('downloadprogress'); e.loaded = loaded; m.dispatchEvent(e); }
                    return new Session(o);
                },
            };
        }
        export function remove_prompt_api() { delete globalThis.LanguageModel; }
    ")]
    extern "C" {
        fn install_minimal_prompt_api();
        fn remove_prompt_api();
    }

    #[wasm_bindgen_test]
    async fn the_bindings_speak_the_prompt_api_including_deprecated_names() {
        install_minimal_prompt_api();
        let nano = BrowserNano::default();
        assert_eq!(
            nano.availability(&NanoCreateOptions::default()).await,
            Ok(Availability::Downloadable)
        );
        let seen = Rc::new(RefCell::new(Vec::new()));
        let s = seen.clone();
        *nano.on_progress.borrow_mut() = Some(Rc::new(move |p| s.borrow_mut().push(p)));
        let model = nano
            .create(&NanoCreateOptions::default())
            .await
            .expect("create");
        assert_eq!(
            *seen.borrow(),
            vec![0.25, 1.0],
            "download progress reaches the listener"
        );
        assert_eq!(
            (model.context_usage(), model.context_window()),
            (10.0, 100.0)
        );

        let mut pieces = Vec::new();
        let text = model
            .prompt_streaming("q", &NanoPromptOptions::default(), &mut |p| {
                pieces.push(p.to_string())
            })
            .await;
        assert_eq!(text.as_deref(), Ok("aé世"));
        assert_eq!(pieces, ["a", "é", "世"], "deltas arrive one by one");
        assert_eq!(
            model
                .prompt("hi", &NanoPromptOptions::default())
                .await
                .as_deref(),
            Ok("P:hi")
        );

        // With images: one user message, the text part then a Blob of each image's bytes.
        let seeing = NanoPromptOptions {
            images: vec!["data:image/png;base64,iVBORw0KGgo=".into()],
            ..NanoPromptOptions::default()
        };
        assert_eq!(
            model.prompt("see", &seeing).await.as_deref(),
            Ok("user:text=see,image=image/png/8")
        );
        let broken = NanoPromptOptions {
            images: vec!["https://x.test/a.png".into()],
            ..NanoPromptOptions::default()
        };
        assert_eq!(
            model.prompt("see", &broken).await.map_err(|e| e.name),
            Err("DataError".to_string())
        );

        assert!(!model.take_overflow());
        model
            .append(&[NanoMessage {
                role: tandem_core::chat::Role::User,
                content: "more".into(),
            }])
            .await
            .expect("append");
        assert!(model.take_overflow(), "quotaoverflow is heard");
        assert!(!model.take_overflow(), "and reported once");
        assert_eq!(model.context_usage(), 15.0);
        assert_eq!(
            model
                .measure_context_usage("four", &NanoPromptOptions::default())
                .await,
            Ok(4.0)
        );
        let copy = model.clone_model().await.expect("clone");
        assert_eq!(copy.context_window(), 100.0);
        assert!(params().await.is_some());

        model.destroy();
        let err = model
            .prompt("again", &NanoPromptOptions::default())
            .await
            .expect_err("destroyed");
        assert_eq!(
            err.name, "InvalidStateError",
            "the DOMException name survives: failover reads it"
        );
    }

    #[wasm_bindgen_test]
    async fn no_prompt_api_reads_as_not_supported() {
        remove_prompt_api();
        assert!(!prompt_api_present());
        let err = BrowserNano::default()
            .availability(&NanoCreateOptions::default())
            .await
            .expect_err("absent");
        assert_eq!(err.name, "NotSupportedError");
    }
}
