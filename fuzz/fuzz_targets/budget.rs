//! The context budget over any conversation, window and settings: no panic, input plus the
//! answer's reserve never exceeds the window, and the included pairs are a newest suffix.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::budget::{compute_budget, BudgetSettings, Conversation, TokenCache};
use tandem_core::chat::{ChatMessage, Role};

fuzz_target!(|data: &[u8]| {
    if data.len() < 12 {
        return;
    }
    let word = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    // Windows from tiny to huge, so both refusals and roomy budgets are reached.
    let window = word(0) >> (data[0] % 24);
    let settings = BudgetSettings {
        chars_per_token: (data[4] % 4 == 0).then(|| f32::from(data[5]) / 16.0),
        user_request_allowance: word(4) >> 20,
        assistant_response_allowance: word(8) >> (8 + data[8] % 24),
        max_trim_attempts: 3,
        ..BudgetSettings::default()
    };
    let system = (data[9] % 2 == 0).then_some("You are terse.");
    let images = usize::from(data[10] % 3);
    let text = String::from_utf8_lossy(&data[12..]);
    let mut messages: Vec<ChatMessage> = text
        .split('|')
        .enumerate()
        .map(|(i, part)| {
            let flags = part.bytes().next().unwrap_or(0);
            let role = match flags % 5 {
                0 | 1 => Role::User,
                2 | 3 => Role::Assistant,
                _ => Role::System,
            };
            let mut m = ChatMessage::new(role, part);
            m.id = format!("m{i}");
            m.hidden = flags % 7 == 0;
            m
        })
        .collect();
    let mut last = ChatMessage::new(Role::User, "and now?");
    last.id = "req".into();
    messages.push(last);
    let Ok(conversation) = Conversation::from_messages(&messages) else {
        return;
    };
    let mut cache = TokenCache::new();
    let Ok(budget) = compute_budget(&conversation, system, images, window, &settings, &mut cache)
    else {
        return;
    };
    let b = &budget.breakdown;
    assert!(
        u64::from(b.total_input) + u64::from(settings.assistant_response_allowance)
            <= u64::from(window),
        "{b:?} in {window}"
    );
    assert_eq!(b.remaining_for_response, window - b.total_input);
    let ids: Vec<&str> = conversation.pairs.iter().map(|p| p.id).collect();
    let suffix = &ids[ids.len() - budget.included_pairs.len()..];
    assert!(
        suffix.iter().copied().eq(budget.included_pairs.iter().map(String::as_str)),
        "{:?} is not a newest suffix of {ids:?}",
        budget.included_pairs
    );
});
