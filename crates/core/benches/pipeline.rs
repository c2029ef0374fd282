//! `scripts/bench` runs this: prints figures, asserts nothing.
//!
//! (a) The token estimator's error against tiktoken's `o200k_base` and `cl100k_base`, next to
//!     the flat 3.5 / 1.5 chars-per-token rule, per file, overall and per script, on the
//!     tuning corpus (`tests/data/corpus/`) and separately on the held-out one
//!     (`tests/data/corpus-heldout/`), plus what can be said for Anthropic and Gemini.
//! (b) How long budgeting takes for long conversations, with a cold and a warm token cache.

// Not shipped: measuring code may use the standard sorts (clippy.toml disallows them in
// Tandem's wasm).
#![allow(clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use tandem_core::budget::{compute_budget, BudgetSettings, Conversation, TokenCache};
use tandem_core::chat::{ChatMessage, Role};

// The measuring helpers are shared with the held-out accuracy test; its `#[test]`s are not
// compiled into this harness-less bench.
#[path = "../tests/estimator.rs"]
#[allow(dead_code)]
mod estimator;

fn main() {
    estimator_error();
    budget_timings();
}

fn estimator_error() {
    for (heldout, title) in [
        (
            false,
            "tuning corpus (tests/data/corpus/, what tokens.rs is fitted on)",
        ),
        (
            true,
            "held-out corpus (tests/data/corpus-heldout/, never used for tuning)",
        ),
    ] {
        match estimator::measure(heldout) {
            Ok(files) => estimator_table(title, &files),
            Err(e) => println!("{title}: unreadable: {e}"),
        }
        println!();
    }
}

/// Per-file, overall and per-script error of one corpus half, then the providers whose
/// tokenizer is not public.
fn estimator_table(title: &str, files: &[estimator::Measured]) {
    println!("Token estimate vs tiktoken, {title}");
    println!("(relative error; MEAN = mean of |error| per file)");
    let header = ["err o200k", "err cl100k", "flat o200k", "flat cl100k"];
    let header: String = header.iter().map(|h| format!("{h:>13}")).collect();
    println!(
        "{:<26} {:<12} {:>7} {:>7} {:>7}{header}",
        "file", "script", "est", "o200k", "cl100k"
    );
    // Errors in percent, one 13-wide column each.
    let cells = |errs: &[f64], signed: bool| -> String {
        errs.iter()
            .map(|e| match signed {
                true => format!("{:>+12.1}%", e * 100.0),
                false => format!("{:>12.1}%", e * 100.0),
            })
            .collect()
    };
    let flat_errs = |f: &estimator::Measured| {
        [
            estimator::rel(f.flat, f.o200k),
            estimator::rel(f.flat, f.cl100k),
        ]
    };
    for f in files {
        let [o, c] = f.errors();
        let [fo, fc] = flat_errs(f);
        println!(
            "{:<26} {:<12} {:>7} {:>7} {:>7}{}",
            f.name,
            f.script.name(),
            f.est,
            f.o200k,
            f.cl100k,
            cells(&[o, c, fo, fc], true)
        );
    }
    let mean_flat = |group: &[&estimator::Measured]| {
        let n = group.len().max(1) as f64;
        let sums = group.iter().fold([0.0f64; 2], |[a, b], f| {
            let [o, c] = flat_errs(f);
            [a + o.abs(), b + c.abs()]
        });
        sums.map(|s| s / n)
    };
    let all: Vec<&estimator::Measured> = files.iter().collect();
    let [o, c] = estimator::mean_abs(files);
    let [fo, fc] = mean_flat(&all);
    println!(
        "{:<66}{}",
        format!("MEAN |error| ({} files)", files.len()),
        cells(&[o, c, fo, fc], false)
    );
    println!("per script (files grouped by their dominant characters):");
    for (script, n, [o, c]) in estimator::by_script(files) {
        let group: Vec<&estimator::Measured> =
            files.iter().filter(|f| f.script == script).collect();
        let [fo, fc] = mean_flat(&group);
        println!(
            "{:<66}{}",
            format!("  {} ({n})", script.name()),
            cells(&[o, c, fo, fc], false)
        );
    }
    providers_without_tokenizer(files);
}

/// Anthropic and Gemini publish no tokenizer, only a rule of thumb for English, so the
/// estimate can be compared with their count only there; everywhere else only the usage the
/// provider reports is authoritative (and the budget already replaces the estimate with it).
fn providers_without_tokenizer(files: &[estimator::Measured]) {
    // Anthropic, docs glossary ("Tokens"): "For Claude, a token approximately represents 3.5
    // English characters" (docs.anthropic.com/en/docs/resources/glossary).
    const ANTHROPIC_CHARS_PER_TOKEN: f64 = 3.5;
    // Google, "Understand and count tokens": "For Gemini models, a token is equivalent to
    // about 4 characters. 100 tokens is equal to about 60-80 English words."
    // (ai.google.dev/gemini-api/docs/tokens).
    const GEMINI_CHARS_PER_TOKEN: f64 = 4.0;
    let english: Vec<&estimator::Measured> = files.iter().filter(|f| f.english).collect();
    if english.is_empty() {
        println!("Anthropic / Gemini: no English file here; no tokenizer is public, so only the provider's reported usage is authoritative");
        return;
    }
    let names: Vec<&str> = english.iter().map(|f| f.name.as_str()).collect();
    println!(
        "Anthropic / Gemini (no public tokenizer; documented ratios are for English only, so only English files: {}):",
        names.join(", ")
    );
    for (provider, ratio) in [
        (
            "Anthropic, 3.5 English chars/token",
            ANTHROPIC_CHARS_PER_TOKEN,
        ),
        ("Gemini, ~4 chars/token", GEMINI_CHARS_PER_TOKEN),
    ] {
        let n = english.len() as f64;
        let (mut est_err, mut ratio_vs_o200k) = (0.0, 0.0);
        for f in &english {
            let documented = f.chars as f64 / ratio;
            est_err += ((f64::from(f.est) - documented) / documented).abs();
            ratio_vs_o200k += ((documented - f.o200k as f64) / f.o200k as f64).abs();
        }
        println!(
            "  {provider:<36} estimate vs documented count: {:>5.1}% mean |error|  (the ratio itself vs o200k: {:.1}%)",
            est_err / n * 100.0,
            ratio_vs_o200k / n * 100.0
        );
    }
    println!("  other scripts, code, data: neither provider documents a ratio; only the usage they report is authoritative (usage replaces the estimate)");
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
