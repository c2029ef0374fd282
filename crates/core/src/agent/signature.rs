//! Finding an element again in a fresh snapshot. Pages re-render between the moment the LLM
//! reads the element list and the moment its action runs: nodes are replaced (new handles),
//! lists reorder, counters change. A [`Signature`] keeps what identifies an element to a
//! person (name, role, surrounding text, key attributes, position among look-alikes), and
//! [`find`] scores every candidate against it.
//!
//! A wrong click is worse than a retry, so [`find`] refuses to guess: a best score under
//! [`ACCEPT`] is [`Match::NotFound`], and two candidates within [`MARGIN`] of each other are
//! [`Match::Ambiguous`] unless position settles it (see [`Evidence::Position`]).

use crate::hash::HashMap;
use std::cell::OnceCell;

use super::snapshot::{Element, Snapshot};
use crate::case::Lowercase;

/// Lowest score that counts as the same element.
pub const ACCEPT: f64 = 0.6;
/// Smallest lead the best candidate needs over the runner-up to be chosen on content alone.
pub const MARGIN: f64 = 0.1;

/// Attributes that identify an element; `value` is left out because it is state, not identity.
const KEY_ATTRS: [&str; 6] = ["id", "name", "type", "href", "placeholder", "autocomplete"];

/// Feature weights. The name is not among them: it multiplies the whole score instead, so no
/// agreement elsewhere can make "Add to wishlist" pass for "Add to cart".
const W_TEXT: f64 = 0.15;
const W_CONTEXT: f64 = 0.30;
const W_ROLE: f64 = 0.20;
const W_TAG: f64 = 0.10;
const W_ATTRS: f64 = 0.25;

/// Lowest similarity of two contexts that counts as the same surroundings
/// ([`Signature::same_surroundings`]): a re-rendered row keeps its text give or take a
/// changing number ("Qty 1" → "Qty 2" scores 0.75), an opened mail's toolbar shares a subject
/// and a sender with the row it came from but not much more (~0.5).
pub const SAME_CONTEXT: f64 = 0.7;

/// See [`Signature::content_key`].
pub type ContentKey<'a> = (
    &'a [u32],
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a [(&'static str, String)],
);

/// The identity of one element of one snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    /// Position in the snapshot's `elements`.
    pub index: usize,
    pub handle: String,
    pub frame: Vec<u32>,
    pub tag: String,
    /// Effective role, else the tag.
    pub role: String,
    pub name: Text,
    pub text: Text,
    pub context: Text,
    pub attrs: Vec<(&'static str, String)>,
    /// Rank among the elements of the same frame, role and name, in document order…
    pub ordinal: usize,
    /// …and how many there are. Position means something only while this does not change.
    pub group_size: usize,
    /// Where it is: its box's centre in the top document's viewport, and the page's scroll
    /// then (a box fixed to the viewport stays put when the page scrolls, others move with it).
    pub place: Place,
    /// Of an element the driver described briefly ([`Element::brief`]): nothing but its node
    /// says which one it is.
    pub brief: bool,
}

/// An element's centre and size in the viewport, with the page's scroll ([`Signature::place`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Place {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub scroll_x: f64,
    pub scroll_y: f64,
}

impl Place {
    /// Whether `other` stands where this stood: in the viewport (a fixed bar) or on the page,
    /// within half its smaller side or 16 pixels.
    fn same_as(&self, other: &Place) -> bool {
        let room = (self.width.min(self.height) / 2.0).max(16.0);
        let near = |dx: f64, dy: f64| dx.abs() <= room && dy.abs() <= room;
        near(self.x - other.x, self.y - other.y)
            || near(
                self.x + self.scroll_x - other.x - other.scroll_x,
                self.y + self.scroll_y - other.y - other.scroll_y,
            )
    }
}

/// A normalised string (lowercase, collapsed whitespace) with its character bigrams, computed
/// once because the same signature is compared with many candidates, and only when first
/// compared: most elements are paired by node or by equal text and never need them (a large
/// page's map builds ~1,500 signatures a step).
#[derive(Clone, Debug)]
pub struct Text {
    pub norm: String,
    grams: OnceCell<Vec<(char, char)>>,
}

/// The bigrams follow from the text, computed or not.
impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.norm == other.norm
    }
}

impl Eq for Text {}

impl Text {
    pub fn new(raw: &str) -> Self {
        // The driver sends text already collapsed: then only the case changes.
        let collapsed = !raw.starts_with(' ')
            && !raw.ends_with(' ')
            && !raw.contains("  ")
            && !raw.chars().any(|c| c.is_whitespace() && c != ' ');
        let norm = if collapsed {
            raw.lowercase()
        } else {
            raw.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .lowercase()
        };
        Self {
            norm,
            grams: OnceCell::new(),
        }
    }

    fn grams(&self) -> &[(char, char)] {
        self.grams.get_or_init(|| {
            let chars: Vec<char> = self.norm.chars().collect();
            let mut grams: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
            crate::sort::sort(&mut grams);
            grams
        })
    }

    pub fn is_empty(&self) -> bool {
        self.norm.is_empty()
    }

    /// Sørensen–Dice over character bigrams: tolerant of small edits ("Cart (0)" → "Cart (1)")
    /// while unrelated labels score low.
    pub fn similarity(&self, other: &Text) -> f64 {
        if self.norm == other.norm {
            return 1.0;
        }
        let (mine, theirs) = (self.grams(), other.grams());
        if mine.is_empty() || theirs.is_empty() {
            return 0.0;
        }
        let (mut i, mut j, mut common) = (0, 0, 0usize);
        while i < mine.len() && j < theirs.len() {
            match mine[i].cmp(&theirs[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    common += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        (2 * common) as f64 / (mine.len() + theirs.len()) as f64
    }
}

impl Signature {
    /// Signatures of `snapshot.elements[i]` for each `i` of `indices`; ordinals and group sizes
    /// are counted among those elements only, so callers pass the same selection each time.
    pub fn of_elements(snapshot: &Snapshot, indices: &[usize]) -> Vec<Signature> {
        let mut sigs: Vec<Signature> = indices
            .iter()
            .filter_map(|&i| {
                snapshot
                    .elements
                    .get(i)
                    .map(|el| Self::single(i, el, snapshot))
            })
            .collect();
        // Keys borrowed from the signatures (a large page has ~1,500 of them a step), then
        // written back once the map is done with them. A brief element is no one's look-alike:
        // it has no name to share.
        let mut groups: HashMap<(&[u32], &str, &str), usize> = HashMap::default();
        let ordinals: Vec<usize> = sigs
            .iter()
            .map(|sig| {
                if sig.brief {
                    return 0;
                }
                let seen = groups.entry(sig.group_key()).or_default();
                *seen += 1;
                *seen - 1
            })
            .collect();
        let sizes: Vec<usize> = sigs
            .iter()
            .map(|sig| match sig.brief {
                true => 1,
                false => groups.get(&sig.group_key()).copied().unwrap_or(1),
            })
            .collect();
        for ((sig, ordinal), size) in sigs.iter_mut().zip(ordinals).zip(sizes) {
            sig.ordinal = ordinal;
            sig.group_size = size;
        }
        sigs
    }

    fn single(index: usize, el: &Element, snapshot: &Snapshot) -> Signature {
        let attrs = KEY_ATTRS
            .iter()
            .filter_map(|&k| el.attr(k).map(|v| (k, v.to_owned())))
            .collect();
        Signature {
            index,
            handle: el.handle.clone(),
            frame: el.frame.clone(),
            tag: el.tag.clone(),
            role: el.effective_role().unwrap_or(&el.tag).to_owned(),
            name: Text::new(&el.name),
            text: Text::new(&el.text),
            context: Text::new(&el.context),
            attrs,
            ordinal: 0,
            group_size: 1,
            place: Place {
                x: el.bbox.x + el.bbox.width / 2.0,
                y: el.bbox.y + el.bbox.height / 2.0,
                width: el.bbox.width,
                height: el.bbox.height,
                scroll_x: snapshot.scroll.x,
                scroll_y: snapshot.scroll.y,
            },
            brief: el.brief,
        }
    }

    /// Whether `other`, another DOM node, may be this element drawn again: it stands in the
    /// same surroundings, its context (the text around it) alike ([`SAME_CONTEXT`]), or, where
    /// neither has a context, in the same place. A look-alike with the same role and name
    /// elsewhere (the opened mail's "Archive" after the row's "Archive") is another element,
    /// and the model must be told so.
    pub fn same_surroundings(&self, other: &Signature) -> bool {
        if self.context.is_empty() && other.context.is_empty() {
            return self.place.same_as(&other.place);
        }
        self.context.similarity(&other.context) >= SAME_CONTEXT
    }

    fn group_key(&self) -> (&[u32], &str, &str) {
        (&self.frame, &self.role, &self.name.norm)
    }

    /// Everything but handle and position: elements with equal keys can only be told apart by
    /// where they are.
    pub fn content_key(&self) -> ContentKey<'_> {
        (
            &self.frame,
            &self.tag,
            &self.role,
            &self.name.norm,
            &self.text.norm,
            &self.context.norm,
            &self.attrs,
        )
    }

    /// How alike two elements are, in [0, 1]. Elements in different frames, or differing in
    /// both tag and role, are never alike.
    pub fn similarity(&self, other: &Signature) -> f64 {
        if self.frame != other.frame || (self.tag != other.tag && self.role != other.role) {
            return 0.0;
        }
        let mut sum = 0.0;
        let mut weights = 0.0;
        let mut add = |weight: f64, value: f64| {
            sum += weight * value;
            weights += weight;
        };
        // Absent on both sides says nothing, so such features are left out of the average.
        if !(self.text.is_empty() && other.text.is_empty()) {
            add(W_TEXT, self.text.similarity(&other.text));
        }
        if !(self.context.is_empty() && other.context.is_empty()) {
            add(W_CONTEXT, self.context.similarity(&other.context));
        }
        add(W_ROLE, f64::from(u8::from(self.role == other.role)));
        add(W_TAG, f64::from(u8::from(self.tag == other.tag)));
        if let Some(agreement) = attr_agreement(&self.attrs, &other.attrs) {
            add(W_ATTRS, agreement);
        }
        self.name.similarity(&other.name) * sum / weights
    }
}

/// Share of the attributes present on either side that are equal on both; `None` when neither
/// side has any.
fn attr_agreement(a: &[(&str, String)], b: &[(&str, String)]) -> Option<f64> {
    let union = KEY_ATTRS
        .iter()
        .filter(|k| a.iter().chain(b).any(|(name, _)| name == *k))
        .count();
    if union == 0 {
        return None;
    }
    let equal = a.iter().filter(|pair| b.contains(pair)).count();
    Some(equal as f64 / union as f64)
}

/// What decided a [`Match::Found`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// The same DOM node (same handle), still looking like the element it was.
    SameNode,
    /// Its content scored clearly best.
    Content,
    /// Look-alikes tied on content; the group of look-alikes has the same size as before and
    /// exactly one of them stands at the element's old rank.
    Position,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Match {
    Found {
        index: usize,
        score: f64,
        evidence: Evidence,
    },
    /// Candidates (snapshot index, score) too close to choose between, best first.
    Ambiguous { candidates: Vec<(usize, f64)> },
    /// Nothing reached [`ACCEPT`]; the best candidate, if any, for diagnostics.
    NotFound { best: Option<(usize, f64)> },
}

/// Finds `target` (taken from an earlier snapshot) among `candidates` (from a fresh one).
pub fn find<'a>(target: &Signature, candidates: impl IntoIterator<Item = &'a Signature>) -> Match {
    let mut scored: Vec<(&Signature, f64)> = candidates
        .into_iter()
        .map(|c| (c, target.similarity(c)))
        .collect();
    if let Some(&(same, score)) = scored.iter().find(|(c, _)| c.handle == target.handle) {
        // Described briefly on either side, the node is all there is to compare: the same
        // node is found, and whoever acts on it has it described in full first.
        if score >= ACCEPT || target.brief || same.brief {
            return Match::Found {
                index: same.index,
                score,
                evidence: Evidence::SameNode,
            };
        }
    }
    if target.brief {
        return Match::NotFound { best: None };
    }
    crate::sort::sort_by(&mut scored, |a, b| b.1.total_cmp(&a.1));
    let Some(&(best, best_score)) = scored.first() else {
        return Match::NotFound { best: None };
    };
    if best_score < ACCEPT {
        return Match::NotFound {
            best: Some((best.index, best_score)),
        };
    }
    let close: Vec<(&Signature, f64)> = scored
        .iter()
        .copied()
        .take_while(|(_, s)| best_score - s < MARGIN)
        .collect();
    if close.len() == 1 {
        return Match::Found {
            index: best.index,
            score: best_score,
            evidence: Evidence::Content,
        };
    }
    let mut at_rank = close.iter().filter(|(c, s)| {
        *s >= ACCEPT && c.group_size == target.group_size && c.ordinal == target.ordinal
    });
    if let (Some(&(c, score)), None) = (at_rank.next(), at_rank.next()) {
        if close.iter().all(|(o, _)| o.group_size == target.group_size) {
            return Match::Found {
                index: c.index,
                score,
                evidence: Evidence::Position,
            };
        }
    }
    Match::Ambiguous {
        candidates: close.iter().map(|(c, s)| (c.index, *s)).collect(),
    }
}
