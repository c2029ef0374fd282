//! `scripts/bench` runs this: prints figures, asserts nothing.
//!
//! (a) The token estimator's error against tiktoken's `o200k_base` and `cl100k_base` on the
//!     corpus in `tests/data/corpus/`, next to the flat 3.5 / 1.5 chars-per-token rule.
//! (b) How long budgeting takes for long conversations, with a cold and a warm token cache.

use std::path::Path;
use std::time::{Duration, Instant};

use tandem_core::budget::{compute_budget, BudgetSettings, Conversation, TokenCache};
use tandem_core::chat::{ChatMessage, Role};
use tandem_core::tokens::{estimate_tokens, flat_estimate};
use tiktoken_rs::{cl100k_base_singleton, o200k_base_singleton};

fn main() {
    estimator_error();
    budget_timings();
}

fn estimator_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/corpus");
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => return println!("corpus {} unreadable: {e}", dir.display()),
    };
    files.sort();
    let (o200k, cl100k) = (o200k_base_singleton(), cl100k_base_singleton());
    println!("Token estimate vs tiktoken (relative error; mean of |error| per file)");
    let header = ["err o200k", "err cl100k", "flat o200k", "flat cl100k"];
    let header: String = header.iter().map(|h| format!("{h:>13}")).collect();
    println!(
        "{:<28} {:>7} {:>7} {:>7}{header}",
        "file", "est", "o200k", "cl100k"
    );
    // Errors in percent, one 13-wide column each.
    let cells = |errs: [f64; 4], signed: bool| -> String {
        errs.iter()
            .map(|e| match signed {
                true => format!("{:>+12.1}%", e * 100.0),
                false => format!("{:>12.1}%", e * 100.0),
            })
            .collect()
    };
    let rel = |est: u32, real: usize| (f64::from(est) - real as f64) / real.max(1) as f64;
    let mut sums = [0.0f64; 4];
    let mut n = 0usize;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let (est, flat) = (estimate_tokens(&text), flat_estimate(&text, 3.5));
        let (o, c) = (
            o200k.encode_ordinary(&text).len(),
            cl100k.encode_ordinary(&text).len(),
        );
        let errs = [rel(est, o), rel(est, c), rel(flat, o), rel(flat, c)];
        for (sum, e) in sums.iter_mut().zip(errs) {
            *sum += e.abs();
        }
        n += 1;
        let name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!("{name:<28} {est:>7} {o:>7} {c:>7}{}", cells(errs, true));
    }
    let mean = sums.map(|sum| sum / n.max(1) as f64);
    println!("{:<52}{}", "MEAN |error|", cells(mean, false));
}

/// A conversation of `pairs` question/answer pairs of varied length, then a new question.
fn conversation(pairs: usize) -> Vec<ChatMessage> {
    const TEXT: &str =
        "The quick brown fox jumps over the lazy dog; fn main() { println!(\"{}\", 42); } ";
    let mut msgs = Vec::with_capacity(pairs * 2 + 1);
    for i in 0..=pairs {
        let mut q = ChatMessage::new(Role::User, TEXT.repeat(1 + i % 3));
        q.id = format!("u{i}");
        msgs.push(q);
        if i < pairs {
            let mut a = ChatMessage::new(Role::Assistant, TEXT.repeat(2 + i % 7));
            a.id = format!("a{i}");
            msgs.push(a);
        }
    }
    msgs
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn budget_timings() {
    const RUNS: usize = 9;
    println!();
    println!(
        "Budget time (pairing + compute_budget; median of {RUNS} runs; limit 1,047,576 tokens)"
    );
    println!(
        "{:>8} {:>14} {:>14} {:>10}",
        "pairs", "cold cache", "warm cache", "included"
    );
    let settings = BudgetSettings::default();
    for pairs in [1_000, 10_000] {
        let msgs = conversation(pairs);
        let budget = |cache: &mut TokenCache| {
            let start = Instant::now();
            let included = Conversation::from_messages(&msgs)
                .and_then(|conv| {
                    compute_budget(&conv, Some("Be helpful."), 0, 1_047_576, &settings, cache)
                })
                .map_or(0, |b| b.included_pairs.len());
            (start.elapsed(), included)
        };
        let cold: Vec<Duration> = (0..RUNS)
            .map(|_| budget(&mut TokenCache::new()).0)
            .collect();
        let mut cache = TokenCache::new();
        let (_, included) = budget(&mut cache);
        let warm: Vec<Duration> = (0..RUNS).map(|_| budget(&mut cache).0).collect();
        println!(
            "{pairs:>8} {:>14.3?} {:>14.3?} {included:>10}",
            median(cold),
            median(warm)
        );
    }
}
