//! PLACEHOLDER until the adapter work lands: replaced wholesale.
use super::Adapter;
use crate::errors::{ErrorKind, ProviderError};
use crate::http::HttpRequest;
use crate::provider::ProviderConfig;
use crate::request::UniversalRequest;
use crate::stream::StreamDecoder;
pub struct OpenAi;
impl Adapter for OpenAi {
    fn translate(&self, _req: &UniversalRequest, _cfg: &ProviderConfig) -> HttpRequest { HttpRequest::post_json(String::new(), vec![], String::new()) }
    fn decoder(&self) -> Box<dyn StreamDecoder> { unimplemented!() }
    fn classify_http(&self, _s: u16, _b: &str, _r: Option<&str>, _c: &ProviderConfig) -> ProviderError { ProviderError::new(ErrorKind::Provider, "") }
}
