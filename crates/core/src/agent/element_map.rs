//! The numbered element list the LLM acts on. Ids are stable across snapshots: an element that
//! is still there keeps its number (same DOM node, or found again by [`signature`]), new ones
//! get fresh numbers (never a recycled one, so a stale id cannot point at a different element)
//! and are marked `*` for one step.
//!
//! [`signature`]: super::signature

use crate::hash::{HashMap, HashSet};
use std::fmt::Write as _;

use super::colour::colour_name;
use super::safety;
use super::signature::{self, Match, Signature};
use super::snapshot::{Cell, Checked, Element, Hint, Rect, Snapshot};
use crate::case::Lowercase;
use crate::decimal::decimal;

/// One numbered element.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub id: u32,
    /// Appeared since the previous map.
    pub is_new: bool,
    /// Identity in the snapshot the map was built from (`signature.index` is its position in
    /// that snapshot's `elements`).
    pub signature: Signature,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ElementMap {
    /// In the snapshot's document order.
    entries: Vec<Entry>,
    next_id: u32,
}

/// Why an id could not be turned into an element of a fresh snapshot.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LocateError {
    #[error("there is no element [{0}] in the current list")]
    UnknownId(u32),
    #[error("element [{id}] is no longer on the page (best look-alike scored {})", decimal(*best, 2))]
    Gone { id: u32, best: f64 },
    #[error("element [{id}] now matches {count} elements equally well; look at the list again")]
    Ambiguous { id: u32, count: usize },
}

/// The text for the LLM and what did not fit in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    pub shown: usize,
    pub omitted: usize,
}

/// Display caps for strings taken from the page (characters).
const NAME_CHARS: usize = 80;
const ATTR_CHARS: usize = 60;
const CONTEXT_CHARS: usize = 50;
/// A first word of a context this long tells namesakes apart alone ([`shortest_distinct`]).
const ONE_WORD_CHARS: usize = 8;
const OPTIONS_SHOWN: usize = 8;
/// Room kept for the "omitted" note so that the cap holds with it.
const NOTE_RESERVE: usize = 80;
/// Signature comparisons one [`ElementMap::build`] may spend on fuzzy matching.
const FUZZY_BUDGET: usize = 200_000;
const FENCE_LABEL: &str = "element list";
const TRUNCATED_NOTE: &str = "… the page has more elements than the driver reports\n";

/// How to read the list; for the system prompt (it is outside the fence on purpose).
pub const LIST_LEGEND: &str = "Element list: `[number] role \"name\"` and details (value, href, \
states…; `near \"…\"`: nearby text telling same names apart). `[number]*`: new since the \
previous step.";

impl ElementMap {
    /// Numbers the visible interactive elements of `snapshot`, reusing the ids of `previous`
    /// for elements that are still there.
    pub fn build(snapshot: &Snapshot, previous: Option<&ElementMap>) -> ElementMap {
        let sigs = listed(snapshot);
        let Some(previous) = previous else {
            let entries = sigs
                .into_iter()
                .zip(1..)
                .map(|(signature, id)| Entry {
                    id,
                    is_new: false,
                    signature,
                })
                .collect::<Vec<_>>();
            let next_id = u32::try_from(entries.len())
                .unwrap_or(u32::MAX)
                .saturating_add(1);
            return ElementMap { entries, next_id };
        };
        let ids = carry_ids(&previous.entries, &sigs);
        let mut next_id = previous.next_id.max(1);
        let entries = sigs
            .into_iter()
            .zip(ids)
            .map(|(signature, id)| match id {
                Some(id) => Entry {
                    id,
                    is_new: false,
                    signature,
                },
                None => {
                    let id = next_id;
                    next_id = next_id.saturating_add(1);
                    Entry {
                        id,
                        is_new: true,
                        signature,
                    }
                }
            })
            .collect();
        ElementMap { entries, next_id }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get(&self, id: u32) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The element that `id` named when this map was built, in the snapshot it was built from.
    pub fn element<'s>(&self, id: u32, snapshot: &'s Snapshot) -> Option<&'s Element> {
        self.get(id)
            .and_then(|e| snapshot.elements.get(e.signature.index))
    }

    /// Finds element `id` in `fresh`, a snapshot taken after this map was built (just before
    /// acting), so that the action goes to the element the LLM meant, under its new handle.
    pub fn locate<'s>(&self, id: u32, fresh: &'s Snapshot) -> Result<&'s Element, LocateError> {
        let entry = self.get(id).ok_or(LocateError::UnknownId(id))?;
        match signature::find(&entry.signature, &listed(fresh)) {
            Match::Found { index, .. } => fresh
                .elements
                .get(index)
                .ok_or(LocateError::Gone { id, best: 0.0 }),
            Match::Ambiguous { candidates } => Err(LocateError::Ambiguous {
                id,
                count: candidates.len(),
            }),
            Match::NotFound { best } => Err(LocateError::Gone {
                id,
                best: best.map_or(0.0, |(_, s)| s),
            }),
        }
    }

    /// The list as the LLM reads it, fenced as untrusted data and at most `max_chars`
    /// characters long (the page header is kept even when it alone is longer; for a token
    /// budget, ~4 characters a token): elements in the viewport first (document order), then
    /// those below it, then those above it (nearest first), then a note of how many did not fit.
    ///
    /// An element under something else in the viewport is listed marked covered (and by
    /// what), with a note to close what covers it first; an element that holds nothing but
    /// other listed elements (a tab around its link, a list around its items) gives way to
    /// them. Such entries keep their ids, so the element comes back under its old number once
    /// it is uncovered, and an action on it still finds it (and is told it is covered).
    pub fn render(&self, snapshot: &Snapshot, max_chars: usize) -> Rendered {
        let mut inside = Vec::new();
        let mut below = Vec::new();
        let mut above = Vec::new();
        // Far elements the driver described briefly: counted with what is not listed, never
        // listed (they have no name to list).
        let mut brief_below = Vec::new();
        let mut brief_above = Vec::new();
        let mut covered = 0;
        // A product's image link and its title link: the same place under the same name is
        // one line (the first; the other keeps its id, so an action on it still works).
        let mut links: HashSet<(&str, String)> = HashSet::default();
        for entry in &self.entries {
            let Some(el) = snapshot.elements.get(entry.signature.index) else {
                continue;
            };
            // Listed, marked covered and by what: the model knows the control is there and
            // what to close first (a colour picker left open over the form's button).
            if el.covered {
                covered += 1;
            }
            if is_holder(el) {
                continue;
            }
            if let Some(href) = el.attr("href").filter(|_| !label_of(el).is_empty()) {
                if !links.insert((href, name_key(el))) {
                    continue;
                }
            }
            match (el.in_viewport, el.bbox.y + el.bbox.height > 0.0, el.brief) {
                (true, _, _) => inside.push(entry),
                (false, true, false) => below.push(entry),
                (false, true, true) => brief_below.push(entry),
                (false, false, false) => above.push(entry),
                (false, false, true) => brief_above.push(entry),
            }
        }
        above.reverse();
        brief_above.reverse();

        let compact = inside.len() >= LONG_VIEWPORT;
        let offered: Vec<&Entry> = inside.iter().chain(&below).chain(&above).copied().collect();
        let mut body = format!(
            "page: {}\nurl: {}\nviewport {}x{} at scroll {},{} of {}x{}\n",
            quote(&snapshot.title, NAME_CHARS),
            snapshot.url,
            decimal(snapshot.viewport.width, 0),
            decimal(snapshot.viewport.height, 0),
            decimal(snapshot.scroll.x, 0),
            decimal(snapshot.scroll.y, 0),
            decimal(snapshot.page.width, 0),
            decimal(snapshot.page.height, 0),
        );
        let overhead = safety::fence(FENCE_LABEL, "").chars().count();
        let truncated_note = if snapshot.truncated {
            TRUNCATED_NOTE
        } else {
            ""
        };
        let covered_note = if covered > 0 {
            format!(
                "… {} under something else (a banner, a dialog, another panel), marked covered: a click cannot reach them; close or move what covers them first\n",
                elements_phrase(covered)
            )
        } else {
            String::new()
        };
        let reserve = NOTE_RESERVE + truncated_note.chars().count() + covered_note.chars().count();
        let fixed = overhead + body.chars().count() + reserve;
        let mut sections = [
            ("", inside),
            ("below the viewport", below),
            ("above the viewport", above),
        ];
        // Which lines fit: decided with the names told apart among everything offered (the
        // longest they can be), then rendered with the names told apart among what is listed
        // only, so that an element is not given a `near` for a namesake the model never sees.
        let wide = Names::of(&offered, snapshot, compact);
        let mut plan = plan_sections(&sections, snapshot, &wide, max_chars.saturating_sub(fixed));
        // Cut for length with something open left out (the options just opened over a long
        // grid): what is open and what has focus go first, the rest after in order.
        if plan[0].2.iter().any(|e| is_open(e, snapshot)) {
            let (open, rest): (Vec<&Entry>, Vec<&Entry>) =
                sections[0].1.iter().partition(|e| is_open(e, snapshot));
            sections[0].1 = open.into_iter().chain(rest).collect();
            plan = plan_sections(&sections, snapshot, &wide, max_chars.saturating_sub(fixed));
        }
        for ((_, _, left), brief) in plan.iter_mut().skip(1).zip([brief_below, brief_above]) {
            left.extend(brief);
        }
        let listed: Vec<&Entry> = plan
            .iter()
            .flat_map(|(_, shown, _)| shown.clone())
            .collect();
        let mut names = Names::of(&listed, snapshot, compact);
        // A rank or a grid place counts every namesake offered, not only those listed: it
        // stays the element's place among all its kind (in a box scrolled or a list cut short).
        names.ranks.clone_from(&wide.ranks);
        names.grid.clone_from(&wide.grid);
        names.same_place.clone_from(&wide.same_place);
        let mut text = render_sections(&plan, snapshot, &names);
        // Told apart among fewer, a line may say more than it did (a `near` instead of a
        // rank): drop the farthest listed lines until the cap holds again.
        while fixed + text.chars().count() > max_chars {
            let Some(last) = plan
                .iter_mut()
                .rev()
                .find(|(_, shown, _)| !shown.is_empty())
            else {
                break;
            };
            if let Some(entry) = last.1.pop() {
                last.2.insert(0, entry);
            }
            text = render_sections(&plan, snapshot, &names);
        }
        body.push_str(&text);
        let shown = plan.iter().map(|(_, s, _)| s.len()).sum::<usize>();
        let omitted = plan.iter().map(|(_, _, o)| o.len()).sum::<usize>();
        // What is not listed is summarised by where it is, so the model knows what scrolling
        // would show without paying for every line of it; when even that does not fit, one
        // count (within the reserve kept for it).
        let lines: Vec<String> = plan
            .iter()
            .filter(|(_, _, left)| !left.is_empty())
            .map(|(title, _, left)| {
                let place = if title.is_empty() {
                    "in the viewport"
                } else {
                    title
                };
                format!(
                    "… {} more {place}, not listed: {}\n",
                    left.len(),
                    summarise(left, snapshot)
                )
            })
            .collect();
        let with_summary = format!("{body}{}{covered_note}{truncated_note}", lines.concat());
        // Measured fenced: fencing may change the length (a number that looks like a card).
        if !lines.is_empty()
            && safety::fence(FENCE_LABEL, with_summary.trim_end())
                .chars()
                .count()
                <= max_chars
        {
            lines.iter().for_each(|l| body.push_str(l));
        } else if omitted > 0 {
            let _ = writeln!(
                body,
                "… {omitted} more elements not shown (size cap); scroll to see others"
            );
        }
        body.push_str(&covered_note);
        body.push_str(truncated_note);
        Rendered {
            text: safety::fence(FENCE_LABEL, body.trim_end()),
            shown,
            omitted,
        }
    }
}

/// One section of the list: its title, the entries listed, the entries left out (nearest
/// first).
type Section<'e> = (&'static str, Vec<&'e Entry>, Vec<&'e Entry>);

/// Splits each section into what fits in `room` characters (in order: the viewport first)
/// and what is left out.
fn plan_sections<'e>(
    sections: &[(&'static str, Vec<&'e Entry>)],
    snapshot: &Snapshot,
    names: &Names,
    room: usize,
) -> Vec<Section<'e>> {
    let mut used = 0;
    let mut full = false;
    sections
        .iter()
        .map(|(title, entries)| {
            let mut shown = Vec::new();
            let mut left = Vec::new();
            let header = if title.is_empty() || entries.is_empty() {
                0
            } else {
                format!("-- {title} --\n").chars().count()
            };
            // Outside the viewport only the nearest are listed; the rest are summarised.
            // A long viewport already gives the model plenty to act on: fewer outside it.
            let most = match (*title, names.compact) {
                ("", _) => usize::MAX,
                ("below the viewport", false) => LISTED_BELOW,
                ("below the viewport", true) => LISTED_BELOW_COMPACT,
                (_, false) => LISTED_ABOVE,
                (_, true) => LISTED_ABOVE_COMPACT,
            };
            for &entry in entries {
                let fits = !full
                    && shown.len() < most
                    && snapshot
                        .elements
                        .get(entry.signature.index)
                        .is_some_and(|el| {
                            let len = render_line(entry, el, snapshot, names).chars().count() + 1;
                            let extra = if shown.is_empty() { header } else { 0 };
                            let room = match title.is_empty() {
                                true => room,
                                false => room.saturating_sub(SUMMARY_RESERVE),
                            };
                            if used + len + extra <= room {
                                used += len + extra;
                                true
                            } else {
                                false
                            }
                        });
                if fits {
                    shown.push(entry);
                } else {
                    // Lines are in order of interest: once one does not fit, the rest wait.
                    full |= shown.len() < most;
                    left.push(entry);
                }
            }
            (*title, shown, left)
        })
        .collect()
}

/// Whether the entry is in what is open now, or has focus ([`Element::open`]).
fn is_open(entry: &Entry, snapshot: &Snapshot) -> bool {
    snapshot
        .elements
        .get(entry.signature.index)
        .is_some_and(|el| el.open)
}

fn render_sections(plan: &[Section<'_>], snapshot: &Snapshot, names: &Names) -> String {
    let mut out = String::new();
    for (title, shown, _) in plan {
        if shown.is_empty() {
            continue;
        }
        if !title.is_empty() {
            let _ = writeln!(out, "-- {title} --");
        }
        for entry in shown {
            if let Some(el) = snapshot.elements.get(entry.signature.index) {
                out.push_str(&render_line(entry, el, snapshot, names));
                out.push('\n');
            }
        }
    }
    out
}

/// Elements listed below and above the viewport (nearest first) before the rest is summarised:
/// enough to act without scrolling on an ordinary page, few enough that a long documentation
/// page costs the model what its viewport costs. The driver describes in full more than these
/// around the viewport (`DESCRIBED_BELOW`, `DESCRIBED_ABOVE` in driver.js; a test holds them
/// apart), and the rest only briefly ([`Element::brief`]), which are never listed.
const LISTED_BELOW: usize = 25;
const LISTED_ABOVE: usize = 10;
/// The same after a long viewport ([`LONG_VIEWPORT`]).
const LISTED_BELOW_COMPACT: usize = 10;
const LISTED_ABOVE_COMPACT: usize = 5;
/// Room the outside sections leave for their summary lines.
const SUMMARY_RESERVE: usize = 240;
/// A viewport with at least this many listed elements (a documentation page's sidebar) is
/// listed compactly: a same-origin link already told apart by its name or its `near` goes
/// without its href, since the model acts by number and the path only costs tokens.
const LONG_VIEWPORT: usize = 30;

/// A group of a summary: its name, how many of each kind, how many in all.
type SummaryGroup<'s> = (Option<&'s str>, Vec<(&'static str, usize)>, usize);

/// Groups shown in a summary line; the rest are counted together.
const SUMMARY_GROUPS: usize = 4;

/// `23 links, 4 buttons in "Navigation"; 120 links in "API"; 8 more elsewhere`: what is not
/// listed, by the group it sits in (a landmark, a form, a section heading), largest first.
fn summarise(left: &[&Entry], snapshot: &Snapshot) -> String {
    // (group, count per kind, total)
    let mut groups: Vec<SummaryGroup<'_>> = Vec::new();
    for entry in left {
        let Some(el) = snapshot.elements.get(entry.signature.index) else {
            continue;
        };
        let group = el.group.as_deref().filter(|g| !g.trim().is_empty());
        let kind = summary_kind(el);
        let slot = match groups.iter().position(|(g, _, _)| *g == group) {
            Some(i) => i,
            None => {
                groups.push((group, Vec::new(), 0));
                groups.len() - 1
            }
        };
        let (_, kinds, total) = &mut groups[slot];
        *total += 1;
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    // Largest first; ties keep page order.
    crate::sort::sort_by_key(&mut groups, |g| std::cmp::Reverse(g.2));
    let mut parts: Vec<String> = Vec::new();
    let mut rest = 0;
    for (i, (group, kinds, total)) in groups.iter().enumerate() {
        if i >= SUMMARY_GROUPS {
            rest += total;
            continue;
        }
        let counted: Vec<String> = kinds
            .iter()
            .map(|(kind, n)| match n {
                1 => format!("1 {kind}"),
                n => format!("{n} {kind}s"),
            })
            .collect();
        match group {
            Some(g) => parts.push(format!("{} in {}", counted.join(", "), quote(g, 30))),
            None => parts.push(counted.join(", ")),
        }
    }
    if rest > 0 {
        parts.push(format!("{rest} more elsewhere"));
    }
    parts.join("; ")
}

/// The word a summary counts an element under.
fn summary_kind(el: &Element) -> &'static str {
    match el.effective_role() {
        Some("link") => "link",
        Some("button") => "button",
        Some("checkbox" | "radio" | "switch") => "choice",
        Some("textbox" | "searchbox" | "combobox" | "spinbutton" | "listbox" | "slider") => "field",
        Some("tab" | "menuitem" | "option" | "treeitem") => "item",
        _ => "control",
    }
}

/// Signatures of what the map lists: visible elements with some hint of interactivity.
fn listed(snapshot: &Snapshot) -> Vec<Signature> {
    let kept: Vec<usize> = snapshot
        .elements
        .iter()
        .enumerate()
        .filter(|(_, el)| el.visible && el.is_interactive())
        .map(|(i, _)| i)
        .collect();
    Signature::of_elements(snapshot, &kept)
}

/// For each new signature, the previous id it inherits. Three passes, cheapest and surest
/// first: same DOM node; identical content (paired in order within groups of equal size);
/// then the fuzzy matcher for what is left. Each previous id is given out at most once.
fn carry_ids(previous: &[Entry], sigs: &[Signature]) -> Vec<Option<u32>> {
    let mut ids: Vec<Option<u32>> = vec![None; sigs.len()];
    let mut taken: HashSet<u32> = HashSet::default();

    let by_handle: HashMap<&str, &Entry> = previous
        .iter()
        .map(|e| (e.signature.handle.as_str(), e))
        .collect();
    for (slot, sig) in ids.iter_mut().zip(sigs) {
        if let Some(prev) = by_handle.get(sig.handle.as_str()) {
            // Described briefly on either side (far from the viewport then or now), the node
            // is all there is to compare.
            let alike = prev.signature.brief
                || sig.brief
                || prev.signature.similarity(sig) >= signature::ACCEPT;
            if alike && taken.insert(prev.id) {
                *slot = Some(prev.id);
            }
        }
    }

    // Re-rendered lists give every node a new handle but keep their content: pair identical
    // elements (in order, when both sides have as many) without scoring each against all.
    // An element with no name, no text and no context says nothing of which one it is: after
    // the view changed (a mail list replaced by the opened mail) another nameless icon would
    // inherit its id unmarked, and the model would take it for the element it knew. Such
    // elements keep their id only as the same DOM node.
    let blank =
        |sig: &Signature| sig.name.is_empty() && sig.text.is_empty() && sig.context.is_empty();
    let mut prev_groups: HashMap<_, Vec<&Entry>> = HashMap::default();
    for prev in previous
        .iter()
        .filter(|e| !taken.contains(&e.id) && !blank(&e.signature))
    {
        prev_groups
            .entry(prev.signature.content_key())
            .or_default()
            .push(prev);
    }
    let mut fresh_groups: HashMap<_, Vec<usize>> = HashMap::default();
    for (i, sig) in sigs.iter().enumerate().filter(|(i, _)| ids[*i].is_none()) {
        fresh_groups.entry(sig.content_key()).or_default().push(i);
    }
    for (key, group) in &prev_groups {
        match fresh_groups.get(key) {
            Some(fresh) if fresh.len() == group.len() => {
                // Equal keys have equal contexts; without one, the place decides.
                for (&i, prev) in fresh.iter().zip(group) {
                    if prev.signature.same_surroundings(&sigs[i]) {
                        taken.insert(prev.id);
                        ids[i] = Some(prev.id);
                    }
                }
            }
            _ => {}
        }
    }

    // Fuzzy matching scores every leftover against every open element; on a page where
    // everything changed at once that is quadratic, so past a budget the rest simply count as
    // new (a fresh number is harmless, a slow step is not). Only elements in the same
    // surroundings are candidates: the name and role alike, elsewhere, is a look-alike (the
    // opened mail's "Archive" is not the row's), which the model must see as new.
    let mut budget = FUZZY_BUDGET;
    for prev in previous
        .iter()
        .filter(|e| !taken.contains(&e.id) && !blank(&e.signature))
    {
        let unpaired = ids.iter().filter(|id| id.is_none()).count();
        budget = match budget.checked_sub(unpaired) {
            Some(left) if unpaired > 0 => left,
            _ => break,
        };
        let open: Vec<&Signature> = sigs
            .iter()
            .zip(&ids)
            .filter(|(s, id)| id.is_none() && prev.signature.same_surroundings(s))
            .map(|(s, _)| s)
            .collect();
        if let Match::Found { index, .. } = signature::find(&prev.signature, open) {
            if let Some(pos) = sigs.iter().position(|s| s.index == index) {
                ids[pos] = Some(prev.id);
            }
        }
    }
    ids
}

/// Listed elements a click on which lands on other listed elements inside them (see
/// [`Element::bare`]); natively interactive ones and editors stay, since they act themselves.
fn is_holder(el: &Element) -> bool {
    el.bare
        && !el
            .interactive
            .iter()
            .any(|h| matches!(h, Hint::Native | Hint::Editable))
}

/// Items counted together for "(row 3, column 2)": frame, tag, width, height.
type ShapeKey<'a> = (Vec<u32>, &'a str, i64, i64);

/// Fields counted together for "(2nd text field in "Shipping")": frame, group, kind.
type FieldGroup<'a> = (Vec<u32>, Option<&'a str>, &'static str);

/// How the lines of one rendering tell elements apart beyond their name.
struct Names {
    /// Names carried by more than one offered element, with each one's context: those lines get
    /// their context (the product card's title and price) when it is theirs alone…
    contexts: HashMap<String, Vec<String>>,
    /// …and otherwise their rank: element index → (rank, how many share the name).
    ranks: HashMap<usize, (usize, usize)>,
    /// Fields with no name of their own: element index → (rank, count) among the fields of the
    /// same kind in the same group, for "(2nd text field in "Shipping")".
    fields: HashMap<usize, (usize, usize)>,
    /// The viewport list is long ([`LONG_VIEWPORT`]): lines say only what tells them apart.
    compact: bool,
    /// Namesakes laid out in rows and columns (a grid of identical circles, a calendar's
    /// slots): element index → (row, column), which tells them apart better than a rank.
    grid: HashMap<usize, (usize, usize)>,
    /// Namesakes whose place in their drawing another namesake shares (slides stacked in one
    /// spot): the place would not tell them apart, so they keep their rank.
    same_place: HashSet<usize>,
}

/// What a line adds to tell its element from namesakes.
enum Distinction {
    /// No other listed element carries the name.
    Unique,
    /// ` near "…"`: the element's own context.
    Near(String),
    /// ` (2nd of 3)`: only its rank tells it apart.
    Rank(String),
}

impl Names {
    fn of(offered: &[&Entry], snapshot: &Snapshot, compact: bool) -> Names {
        let element = |e: &Entry| snapshot.elements.get(e.signature.index);
        let mut by_name: HashMap<String, Vec<&Entry>> = HashMap::default();
        let mut by_group: HashMap<FieldGroup, Vec<&Entry>> = HashMap::default();
        // Items of one size and kind (a board's cells, a calendar's slots), whose rows and
        // columns are counted over all of them, whatever each shows.
        let mut by_shape: HashMap<ShapeKey, Vec<(usize, Rect)>> = HashMap::default();
        // Document order, whatever order the sections put them in.
        let mut ordered: Vec<&Entry> = offered.to_vec();
        crate::sort::sort_by_key(&mut ordered, |e| e.signature.index);
        for &entry in &ordered {
            if let Some(el) = element(entry) {
                by_name.entry(name_key(el)).or_default().push(entry);
                by_shape
                    .entry((
                        el.frame.clone(),
                        el.tag.as_str(),
                        el.bbox.width.round() as i64,
                        el.bbox.height.round() as i64,
                    ))
                    .or_default()
                    .push((entry.signature.index, el.bbox));
                if let Some(kind) = field_kind(el) {
                    by_group
                        .entry((el.frame.clone(), el.group.as_deref(), kind))
                        .or_default()
                        .push(entry);
                }
            }
        }
        let mut names = Names {
            contexts: HashMap::default(),
            ranks: HashMap::default(),
            fields: HashMap::default(),
            compact,
            grid: HashMap::default(),
            same_place: HashSet::default(),
        };
        for items in by_shape.values() {
            let boxes: Vec<Rect> = items.iter().map(|(_, b)| *b).collect();
            if let Some(places) = grid_places(&boxes) {
                for ((index, _), place) in items.iter().zip(places) {
                    names.grid.insert(*index, place);
                }
            }
        }
        for (name, group) in by_name.into_iter().filter(|(_, g)| g.len() > 1) {
            let contexts: Vec<String> = group
                .iter()
                .map(|e| element(e).map(|el| el.context.clone()).unwrap_or_default())
                .collect();
            let places: Vec<Option<(i32, i32)>> = group
                .iter()
                .map(|e| element(e).and_then(|el| el.facts.at))
                .collect();
            for (entry, at) in group.iter().zip(&places) {
                if at.is_some() && places.iter().filter(|p| *p == at).count() > 1 {
                    names.same_place.insert(entry.signature.index);
                }
            }
            let listed = list_ranks(&group, snapshot);
            for (rank, entry) in group.iter().enumerate() {
                let place = listed
                    .as_ref()
                    .and_then(|l| l.get(rank).copied())
                    .unwrap_or((rank + 1, group.len()));
                names.ranks.insert(entry.signature.index, place);
            }
            names.contexts.insert(name, contexts);
        }
        for group in by_group.values() {
            for (rank, entry) in group.iter().enumerate() {
                if element(entry).is_some_and(|el| label_of(el).is_empty()) {
                    names
                        .fields
                        .insert(entry.signature.index, (rank + 1, group.len()));
                }
            }
        }
        names
    }

    /// ` near "…"` when the element's context tells it from its namesakes, else ` (2nd of 3)`;
    /// nothing for a name no other element carries.
    fn distinction(&self, entry: &Entry, el: &Element) -> Distinction {
        let Some(contexts) = self.contexts.get(&name_key(el)) else {
            return Distinction::Unique;
        };
        let unique =
            !el.context.is_empty() && contexts.iter().filter(|c| **c == el.context).count() == 1;
        if unique {
            Distinction::Near(format!(
                " near {}",
                quote(shortest_distinct(&el.context, contexts), CONTEXT_CHARS)
            ))
        } else if let Some((row, column)) = self.grid.get(&entry.signature.index) {
            Distinction::Rank(format!(" (row {row}, column {column})"))
        } else if let Some((rank, of)) = self.ranks.get(&entry.signature.index) {
            Distinction::Rank(format!(" ({} of {of})", ordinal(*rank)))
        } else {
            Distinction::Unique
        }
    }
}

/// The ranks of namesakes (in document order) among all the look-alikes of their list, as the
/// driver counted them ([`super::snapshot::Facts::among`]), when they all sit in one list: the
/// same count for each, ranks rising in document order. `None` otherwise (a namesake outside
/// the list, two lists): their rank among the namesakes offered then.
fn list_ranks(group: &[&Entry], snapshot: &Snapshot) -> Option<Vec<(usize, usize)>> {
    let places: Vec<(usize, usize)> = group
        .iter()
        .map(|e| snapshot.elements.get(e.signature.index)?.facts.among)
        .collect::<Option<_>>()?;
    let of = places.first()?.1;
    let one_list = places.iter().all(|p| p.1 == of && p.0 >= 1 && p.0 <= of)
        && places.windows(2).all(|w| w[0].0 < w[1].0);
    (one_list && of >= places.len()).then_some(places)
}

/// Rows and columns of boxes laid out as a grid (two rows and two columns at least, one box
/// a place): centres within half the smallest box of each other share a row or a column.
/// `None` when they do not form one (a column of namesakes keeps its rank).
fn grid_places(boxes: &[Rect]) -> Option<Vec<(usize, usize)>> {
    if boxes.len() < 4 {
        return None;
    }
    let lines = |centres: Vec<f64>, tolerance: f64| -> Vec<usize> {
        let mut sorted = centres.clone();
        crate::sort::sort_by(&mut sorted, |a, b| a.total_cmp(b));
        let mut starts: Vec<f64> = Vec::new();
        for c in sorted {
            if starts.last().is_none_or(|s| c - s > tolerance) {
                starts.push(c);
            }
        }
        centres
            .iter()
            .map(|c| starts.iter().rposition(|s| *c >= *s).unwrap_or(0) + 1)
            .collect()
    };
    let least =
        |f: fn(&Rect) -> f64| boxes.iter().map(f).fold(f64::INFINITY, f64::min).max(1.0) / 2.0;
    let rows = lines(
        boxes.iter().map(|b| b.y + b.height / 2.0).collect(),
        least(|b| b.height),
    );
    let columns = lines(
        boxes.iter().map(|b| b.x + b.width / 2.0).collect(),
        least(|b| b.width),
    );
    let places: Vec<(usize, usize)> = rows.into_iter().zip(columns).collect();
    let distinct: HashSet<&(usize, usize)> = places.iter().collect();
    let most = |i: fn(&(usize, usize)) -> usize| places.iter().map(i).max().unwrap_or(0);
    let spread = |i: fn(&(usize, usize)) -> usize| most(i) >= 2;
    // Pieces scattered over a board (pins on a map) each start a row and a column of their
    // own: no grid, whose rows and columns are shared (half its places filled at least).
    let filled = most(|p| p.0) * most(|p| p.1) <= 2 * places.len();
    (distinct.len() == places.len() && spread(|p| p.0) && spread(|p| p.1) && filled)
        .then_some(places)
}

/// ` (row "2 pm", column "Tue")` of a cell (by number where the grid has no headers).
fn cell_phrase(cell: &Cell) -> String {
    let row = cell
        .row_header
        .as_deref()
        .map_or_else(|| cell.row.to_string(), |h| quote(h, CONTEXT_CHARS));
    let column = cell
        .column_header
        .as_deref()
        .map_or_else(|| cell.column.to_string(), |h| quote(h, CONTEXT_CHARS));
    format!(" (row {row}, column {column})")
}

/// What the page shows of an element beyond its name (see [`Facts`]): ` shows "x"`,
/// ` resizable`, ` (reacts to hover)`, ` (drag it)`.
fn facts_phrase(el: &Element) -> String {
    let mut out = String::new();
    let f = &el.facts;
    if let Some(shows) = &f.shows {
        let _ = write!(out, " shows {}", quote(shows, CONTEXT_CHARS));
    }
    if f.resizable {
        out.push_str(" resizable");
    }
    if f.hover_only {
        out.push_str(" (reacts to hover)");
    } else if el.interactive == [Hint::Drag] {
        out.push_str(" (drag it)");
    }
    out
}

/// Namesakes told apart by the first words of their context that no other namesake's context
/// starts with (two words at least, so the words read as a place, unless the first is long):
/// `near "Blue backpack"` rather than the whole card's text.
fn shortest_distinct<'c>(context: &'c str, all: &[String]) -> &'c str {
    let words: Vec<(usize, &str)> = context
        .split_whitespace()
        .map(|w| {
            // Offsets within `context`, so the prefix is a slice of it.
            let at = w.as_ptr() as usize - context.as_ptr() as usize;
            (at, w)
        })
        .collect();
    let prefix = |k: usize| -> &'c str {
        match words.get(k.saturating_sub(1)) {
            Some((at, w)) => &context[..at + w.len()],
            None => context,
        }
    };
    let others: Vec<Vec<&str>> = all
        .iter()
        .filter(|c| c.as_str() != context)
        .map(|c| c.split_whitespace().collect())
        .collect();
    // One word is enough when it is long enough to read as a name by itself (an identifier
    // such as `function_3(options)`, a product's full name).
    let least = match words.first() {
        Some((_, w)) if w.chars().count() >= ONE_WORD_CHARS => 1,
        _ => 2,
    };
    for k in least..=words.len() {
        let mine: Vec<&str> = words.iter().take(k).map(|(_, w)| *w).collect();
        let clash = others
            .iter()
            .any(|o| o.len() >= k && o[..k] == mine[..] || o[..] == mine[..]);
        if !clash {
            return prefix(k);
        }
    }
    context
}

/// What kind of form field a person would call `el`, for naming fields that have no label.
fn field_kind(el: &Element) -> Option<&'static str> {
    match (el.tag.as_str(), el.input_type().as_deref()) {
        ("textarea", _) => Some("text field"),
        ("select", _) => Some("list"),
        ("input", Some("checkbox")) => Some("checkbox"),
        ("input", Some("radio")) => Some("radio button"),
        ("input", Some("text" | "email" | "tel" | "url" | "search" | "number" | "password")) => {
            Some("text field")
        }
        ("input", Some("date" | "time" | "datetime-local" | "month" | "week")) => {
            Some("date field")
        }
        _ => None,
    }
}

/// 1st, 2nd, 3rd, 4th… 11th, 12th, 13th, 21st.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn elements_phrase(n: usize) -> String {
    if n == 1 {
        "1 element in view is".to_owned()
    } else {
        format!("{n} elements in view are")
    }
}

/// What makes two lines look alike: their shown names, compared ignoring case and spacing
/// (and for a shape or box shown by its colour, that colour and size too: a red and a blue
/// square need no rank to tell them apart).
fn name_key(el: &Element) -> String {
    let seen = el
        .fill
        .as_deref()
        .and_then(colour_name)
        .map(|c| {
            format!(
                " {} {c} {}x{}",
                el.tag,
                decimal(el.bbox.width, 0),
                decimal(el.bbox.height, 0)
            )
        })
        .unwrap_or_default();
    label_of(el)
        .split_whitespace()
        .chain(seen.split_whitespace())
        .collect::<Vec<_>>()
        .join(" ")
        .lowercase()
}

/// The name a line shows: the accessible name, else the visible text.
fn label_of(el: &Element) -> &str {
    if el.name.is_empty() {
        &el.text
    } else {
        &el.name
    }
}

/// `[12] button "Add to cart"`, `[13]* searchbox "Search" placeholder="Search bags"`.
fn render_line(entry: &Entry, el: &Element, snapshot: &Snapshot, names: &Names) -> String {
    let page_url = &snapshot.url;
    let mut line = format!(
        "[{}]{} {}",
        entry.id,
        if entry.is_new { "*" } else { "" },
        kind(el)
    );
    let label = label_of(el);
    if !label.is_empty() {
        let _ = write!(line, " {}", quote(label, NAME_CHARS));
    }
    if let Some(colour) = el.fill.as_deref().and_then(colour_name) {
        // What the eye tells such elements apart by: colour and size.
        let _ = write!(
            line,
            " {colour} {}×{}",
            decimal(el.bbox.width, 0),
            decimal(el.bbox.height, 0)
        );
    }
    if let Some((rank, of)) = names
        .fields
        .get(&entry.signature.index)
        .filter(|_| label.is_empty())
    {
        // A field with no label, placeholder or title: where it is, as a person would say it.
        let kind = field_kind(el).unwrap_or("field");
        let which = if *of == 1 {
            format!("the {kind}")
        } else {
            format!("{} {kind}", ordinal(*rank))
        };
        match &el.group {
            Some(group) => {
                let _ = write!(line, " ({which} in {})", quote(group, CONTEXT_CHARS));
            }
            None => {
                let _ = write!(line, " ({which})");
            }
        }
    }
    if let Some(p) = el
        .attr("placeholder")
        .filter(|p| !p.eq_ignore_ascii_case(label))
    {
        let _ = write!(line, " placeholder={}", quote(p, ATTR_CHARS));
    }
    let secret = el.input_type().as_deref() == Some("password");
    if let Some(v) = el
        .attr("value")
        .filter(|_| !secret && el.options.is_empty())
    {
        let _ = write!(line, " value={}", quote(v, ATTR_CHARS));
    }
    if el.effective_role() == Some("slider") {
        line.push_str(&slider_state(el));
    }
    let distinction = names.distinction(entry, el);
    // In a long list a same-origin href is kept only where it tells namesakes apart (or the
    // link has no name at all); an off-site one always says where the link leads.
    let href_needed = |href: &str| {
        !names.compact
            || label.is_empty()
            || matches!(distinction, Distinction::Rank(_))
            || !same_origin(href, page_url)
    };
    if let Some(href) = el.attr("href").filter(|h| href_needed(h)) {
        let _ = write!(
            line,
            " href={}",
            quote(&short_href(href, page_url), ATTR_CHARS)
        );
    }
    if !el.options.is_empty() {
        let shown: Vec<String> = el
            .options
            .iter()
            .take(OPTIONS_SHOWN)
            .map(|o| {
                let q = quote(&o.text, ATTR_CHARS);
                if o.selected {
                    format!("{q}(selected)")
                } else {
                    q
                }
            })
            .collect();
        let more = el.options.len().saturating_sub(OPTIONS_SHOWN);
        let tail = if more > 0 {
            format!(" +{more} more")
        } else {
            String::new()
        };
        let _ = write!(line, " options: {}{tail}", shown.join(" | "));
    }
    match el.checked {
        Some(Checked::True) => line.push_str(" checked"),
        Some(Checked::False) => line.push_str(" unchecked"),
        Some(Checked::Mixed) => line.push_str(" mixed"),
        None => {}
    }
    match el.attr("aria-expanded") {
        Some("true") => line.push_str(" expanded"),
        Some("false") => line.push_str(" collapsed"),
        _ => {}
    }
    if el.attr("aria-selected") == Some("true") {
        line.push_str(" selected");
    }
    if el.disabled {
        line.push_str(" disabled");
    } else if el.readonly || el.attr("aria-readonly") == Some("true") {
        line.push_str(" read-only");
    }
    if el.covered {
        match el.covered_by.as_deref().filter(|n| !n.trim().is_empty()) {
            Some(by) => {
                let _ = write!(line, " covered by {}", quote(by, NAME_CHARS));
            }
            None => line.push_str(" covered"),
        }
    }
    // The holder this element stands for (a tab around its link): its role and states.
    if let Some(holder) = el
        .within
        .and_then(|i| snapshot.elements.get(i))
        .filter(|h| is_holder(h))
    {
        if let Some(role) = holder.role.as_deref().filter(|r| HOLDER_ROLES.contains(r)) {
            let selected = if holder.attr("aria-selected") == Some("true") {
                ", selected"
            } else {
                ""
            };
            let _ = write!(line, " (in a {role}{selected})");
        }
    }
    if !el.frame.is_empty() {
        line.push_str(" (in a frame)");
    }
    line.push_str(&facts_phrase(el));
    if label_of(el).is_empty() && names.fields.contains_key(&entry.signature.index) {
        return line;
    }
    // A cell's row and column where its name does not tell it apart (a calendar's empty
    // slots): a data table's named links and buttons need none.
    if let Some(cell) = el
        .facts
        .cell
        .as_ref()
        .filter(|_| label.is_empty() || !matches!(distinction, Distinction::Unique))
    {
        line.push_str(&cell_phrase(cell));
        return line;
    }
    match distinction {
        // A shape of a drawing told apart by rank alone: where it is in the drawing says more.
        Distinction::Rank(d)
            if !d.starts_with(" (row")
                && el.facts.at.is_some()
                && !names.same_place.contains(&entry.signature.index) =>
        {
            if let Some((x, y)) = el.facts.at {
                let _ = write!(line, " at {x}%, {y}% of the drawing");
            }
        }
        Distinction::Near(d) | Distinction::Rank(d) => line.push_str(&d),
        Distinction::Unique => {}
    }
    line
}

/// ` value="40" range 0–100` of a slider: a native range's value is already said with the
/// other fields' values; an ARIA slider's comes from aria-valuetext, else aria-valuenow.
fn slider_state(el: &Element) -> String {
    let mut out = String::new();
    if el.attr("value").is_none() {
        if let Some(v) = el
            .attr("aria-valuetext")
            .or_else(|| el.attr("aria-valuenow"))
        {
            let _ = write!(out, " value={}", quote(v, ATTR_CHARS));
        }
    }
    let native = el.tag == "input";
    let min = el
        .attr("aria-valuemin")
        .or_else(|| el.attr("min"))
        .or(native.then_some("0"));
    let max = el
        .attr("aria-valuemax")
        .or_else(|| el.attr("max"))
        .or(native.then_some("100"));
    if let (Some(min), Some(max)) = (min, max) {
        let _ = write!(
            out,
            " range {}–{}",
            quote(min, 12).trim_matches('"'),
            quote(max, 12).trim_matches('"')
        );
    }
    out
}

/// Roles of a holder worth naming on the line of the element it stands for.
const HOLDER_ROLES: [&str; 5] = ["tab", "option", "menuitem", "treeitem", "row"];

/// The role, or for inputs without one the input type (`password`, `date`, `file`), else the
/// tag.
fn kind(el: &Element) -> String {
    match (el.effective_role(), el.input_type()) {
        (Some(role), _) => role.to_owned(),
        (None, Some(t)) if el.tag == "input" => t,
        _ => el.tag.clone(),
    }
}

/// Whether `href` (as written in the page, or resolved) stays on `page_url`'s origin: a
/// relative reference, or an absolute URL with the same scheme and host.
fn same_origin(href: &str, page_url: &str) -> bool {
    let scheme_end = href.find(':');
    let first_slash = href.find(['/', '?', '#']);
    match (scheme_end, first_slash) {
        // `mailto:`, `javascript:`, `https://elsewhere`: has a scheme of its own.
        (Some(c), Some(s)) if c < s => origin_of(href) == origin_of(page_url),
        (Some(_), None) => false,
        // `//host/path` names a host.
        _ if href.starts_with("//") => false,
        _ => true,
    }
}

/// `https://host:port` of an absolute URL, compared ignoring ASCII case.
fn origin_of(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url, |end| &url[..after_scheme + end])
        .to_ascii_lowercase()
}

/// Same-origin links shortened to their path: the host only costs tokens.
fn short_href(href: &str, page_url: &str) -> String {
    let origin_end = page_url
        .find("://")
        .and_then(|s| page_url[s + 3..].find('/').map(|p| s + 3 + p))
        .unwrap_or(page_url.len());
    href.strip_prefix(&page_url[..origin_end])
        .filter(|rest| rest.starts_with('/'))
        .unwrap_or(href)
        .to_owned()
}

/// A page string as one safe token: whitespace (newlines included) collapsed so that it cannot
/// start a fake line of the list, quotes escaped, length capped.
fn quote(s: &str, max_chars: usize) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let too_long = collapsed.chars().count() > max_chars;
    let mut out = String::with_capacity(collapsed.len() + 2);
    out.push('"');
    for (n, c) in collapsed.chars().enumerate() {
        if too_long && n + 1 >= max_chars {
            out.push('…');
            break;
        }
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod href_tests {
    use super::same_origin;

    #[test]
    fn relative_and_same_host_links_are_same_origin_and_the_rest_are_not() {
        let page = "https://docs.example/guide/intro";
        for href in [
            "/docs/1",
            "#fn3",
            "next",
            "../up",
            "?q=1",
            "https://DOCS.example/x",
        ] {
            assert!(same_origin(href, page), "{href}");
        }
        for href in [
            "https://github.com/tandem",
            "http://docs.example/x",
            "https://docs.example:8443/x",
            "//cdn.example/x",
            "mailto:help@docs.example",
            "javascript:void(0)",
        ] {
            assert!(!same_origin(href, page), "{href}");
        }
    }
}

#[cfg(test)]
mod driver_tests {
    use super::{LISTED_ABOVE, LISTED_BELOW};

    /// The driver describes in full at least twice what the list shows around the viewport:
    /// links folded together and holders skipped leave room for the list to fill up.
    #[test]
    fn the_driver_describes_more_around_the_viewport_than_the_list_shows() {
        let driver = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../extension/content/driver.js"
        ))
        .expect("driver.js beside the crates");
        let constant = |name: &str| -> usize {
            let at = driver
                .find(&format!("const {name} = "))
                .unwrap_or_else(|| panic!("{name} in driver.js"));
            let digits: String = driver[at + name.len() + 9..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().expect("a number")
        };
        assert!(constant("DESCRIBED_BELOW") >= 2 * LISTED_BELOW);
        assert!(constant("DESCRIBED_ABOVE") >= 2 * LISTED_ABOVE);
    }
}
