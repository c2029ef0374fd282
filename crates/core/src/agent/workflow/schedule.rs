//! When a workflow runs by itself: daily, weekly or every N hours, through `chrome.alarms`
//! (one alarm per workflow, named [`alarm_name`]), in a background tab while Chrome runs.
//! Runs missed while Chrome was closed are run once at the next start, not once per miss
//! ([`Schedule::after_run`] skips to the first time after now).

use serde::{Deserialize, Serialize};

use crate::i18n::{count, text, Msg};

/// Prefix of a workflow's alarm name; the rest is the workflow's id.
pub const ALARM_PREFIX: &str = "workflow:";
const HOUR_MS: u64 = 60 * 60 * 1000;
/// A missed run rings this long after the worker starts (`chrome.alarms` rings no sooner).
const RING_SOON_MS: u64 = 1000;
/// Every N hours: at most a month apart.
pub const MAX_HOURS: u32 = 720;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Every {
    Daily,
    Weekly,
    Hours(u32),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub every: Every,
    /// When it runs next (milliseconds since the epoch).
    pub next_at: u64,
    /// "Let scheduled runs use the model when the page changed": off, a run that diverges
    /// pauses and notifies instead.
    #[serde(default)]
    pub allow_model: bool,
}

impl Every {
    /// Reads the view's choice (`daily`, `weekly`, `hours`) and its hours field.
    pub fn parse(kind: &str, hours: &str) -> Result<Option<Every>, Msg> {
        match kind {
            "" | "off" => Ok(None),
            "daily" => Ok(Some(Every::Daily)),
            "weekly" => Ok(Some(Every::Weekly)),
            "hours" => match hours.trim().parse::<u32>() {
                Ok(n) if (1..=MAX_HOURS).contains(&n) => Ok(Some(Every::Hours(n))),
                _ => Err(Msg::new("wfEveryHours", vec![text(MAX_HOURS.to_string())])),
            },
            _ => Err(Msg::key("wfChooseEvery")),
        }
    }

    pub fn period_ms(self) -> u64 {
        match self {
            Every::Daily => 24 * HOUR_MS,
            Every::Weekly => 7 * 24 * HOUR_MS,
            Every::Hours(n) => u64::from(n.clamp(1, MAX_HOURS)) * HOUR_MS,
        }
    }

    pub fn label(self) -> String {
        self.label_message().english()
    }

    /// [`Every::label`] as a catalog message.
    pub fn label_message(self) -> Msg {
        match self {
            Every::Daily => Msg::key("everyDay"),
            Every::Weekly => Msg::key("everyWeek"),
            Every::Hours(1) => Msg::key("everyHour"),
            Every::Hours(n) => Msg::new("everyNHours", vec![count(u64::from(n))]),
        }
    }
}

impl Schedule {
    /// A schedule whose first run is one period from `now`.
    pub fn new(every: Every, allow_model: bool, now: u64) -> Schedule {
        Schedule {
            every,
            next_at: now.saturating_add(every.period_ms()),
            allow_model,
        }
    }

    /// After a run at `now`: the next time, one period on from the planned one, skipping
    /// every time already past (missed runs run once, not once per miss).
    pub fn after_run(&mut self, now: u64) {
        let period = self.every.period_ms();
        if self.next_at > now {
            return;
        }
        let missed = (now - self.next_at) / period + 1;
        self.next_at = self.next_at.saturating_add(missed.saturating_mul(period));
    }

    /// Whether a run was due while nothing could run it (the worker starts after it).
    pub fn missed(&self, now: u64) -> bool {
        self.next_at <= now
    }

    /// When the alarm made again at a worker start (Chrome had none for it) rings: at once
    /// when runs were missed meanwhile, however many (the run then plans the next one with
    /// [`Schedule::after_run`]), else at the planned time.
    pub fn ring_at(&self, now: u64) -> u64 {
        if self.missed(now) {
            now.saturating_add(RING_SOON_MS)
        } else {
            self.next_at
        }
    }
}

/// `chrome.storage.session` key: the workflow whose notification the person clicked, which
/// every open panel (and one opened by the click) shows. Session storage: it is a moment's
/// wish, gone with the browser.
pub const SHOWN_KEY: &str = "workflowShown";
/// How long after the click a panel that opens still shows it (one opened later by hand
/// shows what the person last had).
pub const SHOWN_FRESH_MS: u64 = 60_000;

/// A clicked workflow notification, as the worker tells the panels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    /// The workflow's id.
    pub id: String,
    /// Its run waits for the person (an approval, a pause): the task card is what to show,
    /// not the workflow's entry.
    pub waiting: bool,
    /// When the notification was clicked (milliseconds since the epoch).
    pub at: u64,
}

impl Shown {
    /// Whether a panel opening at `now` still shows it.
    pub fn fresh(&self, now: u64) -> bool {
        now.saturating_sub(self.at) <= SHOWN_FRESH_MS
    }
}

pub fn alarm_name(workflow_id: &str) -> String {
    format!("{ALARM_PREFIX}{workflow_id}")
}

/// The workflow id an alarm is for, if it is a workflow's.
pub fn workflow_of_alarm(name: &str) -> Option<&str> {
    name.strip_prefix(ALARM_PREFIX).filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missed_runs_run_once_and_the_next_is_after_now() {
        let mut s = Schedule::new(Every::Hours(6), false, 0);
        assert_eq!(s.next_at, 6 * HOUR_MS);
        assert!(!s.missed(HOUR_MS));
        // Chrome was closed for two days: one run now, the next one period after a planned time.
        let now = 48 * HOUR_MS + 5;
        assert!(s.missed(now));
        s.after_run(now);
        assert_eq!(s.next_at, 54 * HOUR_MS);
        assert!(!s.missed(now));
    }

    /// Chrome closed for two days over a schedule of every 6 hours (8 runs missed), then
    /// started with the alarm gone: the worker's start makes it ring once, soon; the run plans
    /// the next time after now; the worker starting again (it stops when idle) plans no other
    /// run before that time.
    #[test]
    fn runs_missed_while_chrome_was_closed_run_once_at_the_next_start() {
        let mut s = Schedule::new(Every::Hours(6), false, 0);
        let start = 48 * HOUR_MS + 7;
        let mut runs = 0;
        let mut now = start;
        // Each worker start without an alarm: ring at `ring_at`; each ring is one run.
        for _ in 0..5 {
            let ring = s.ring_at(now);
            if ring <= now + RING_SOON_MS {
                now = ring;
                runs += 1;
                s.after_run(now);
            }
            now += 60_000; // the worker stops and starts again a minute later
        }
        assert_eq!(runs, 1, "one run for the eight missed");
        assert_eq!(
            s.next_at,
            54 * HOUR_MS,
            "the next one keeps the schedule's rhythm"
        );
        assert_eq!(s.ring_at(now), 54 * HOUR_MS);
    }

    #[test]
    fn choices_are_read_with_sentences_for_what_is_not_one() {
        assert_eq!(Every::parse("daily", ""), Ok(Some(Every::Daily)));
        assert_eq!(Every::parse("hours", " 3 "), Ok(Some(Every::Hours(3))));
        assert_eq!(Every::parse("off", "9"), Ok(None));
        assert!(Every::parse("hours", "0")
            .unwrap_err()
            .english()
            .contains("1 to 720"));
        assert!(Every::parse("hours", "-1").is_err());
        assert!(Every::parse("yearly", "").is_err());
        assert_eq!(workflow_of_alarm("workflow:wf-1"), Some("wf-1"));
        assert_eq!(workflow_of_alarm("memory-cleanup"), None);
        assert_eq!(Every::Hours(2).label(), "every 2 hours");
    }
}
