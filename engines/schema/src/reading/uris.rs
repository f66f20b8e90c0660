//! Where a `$ref` points: base URIs, resources and anchors within one document.
//!
//! Contract: [`Resources::collect`] walks a document once, as the drafts say a
//! validator sees it: each schema object whose id keyword (`$id`, or `id` under
//! draft-03 and draft-04; beside a `$ref`, ignored under draft-07 and before) names a
//! URI starts a resource whose base is that URI resolved against the enclosing base
//! (RFC 3986, section 5.2); `$anchor` and `$dynamicAnchor` (2019-09 on), and an id that
//! is a plain-name fragment (draft-07 and before), name the object within its
//! resource. [`Resources::target`] resolves a reference met at a JSON pointer against
//! the base there and returns the JSON pointer of what it names within this document,
//! or `None` (another document: nothing here is fetched). The document itself, when it
//! has no id, is at [`DEFAULT_BASE`].

use std::collections::HashMap;

use serde_json::Value;

use crate::dialect::Draft;

use super::child;

/// The base of a document without an id of its own: references relative to it resolve
/// to the document, and nothing else names it.
pub const DEFAULT_BASE: &str = "tokensieve:/document.json";

/// The resources and anchors of one document.
pub struct Resources {
    /// Resource URI (no fragment) to the JSON pointer of its schema.
    by_uri: HashMap<String, String>,
    /// JSON pointer of each resource's schema to its URI.
    by_pointer: HashMap<String, String>,
    /// (resource URI, anchor name) to the JSON pointer of the schema it names.
    anchors: HashMap<(String, String), String>,
}

/// Where the drafts put a document's ids and anchors.
struct Keywords {
    id: &'static str,
    /// `$ref` makes its siblings, an id among them, ignored (draft-07 and before).
    ref_hides_id: bool,
    /// `$anchor` and `$dynamicAnchor` name anchors (2019-09 on).
    anchors: bool,
}

impl Resources {
    /// The resources of `root`, a document of draft `draft`.
    pub fn collect(root: &Value, draft: Draft) -> Resources {
        let mut r = Resources {
            by_uri: HashMap::new(),
            by_pointer: HashMap::new(),
            anchors: HashMap::new(),
        };
        let kw = Keywords {
            id: if draft <= Draft::Draft4 { "id" } else { "$id" },
            ref_hides_id: draft <= Draft::Draft7,
            anchors: draft >= Draft::Draft2019,
        };
        r.add_resource(DEFAULT_BASE, "");
        r.walk(root, "", DEFAULT_BASE, &kw);
        r
    }

    fn add_resource(&mut self, uri: &str, ptr: &str) {
        self.by_uri
            .entry(uri.to_string())
            .or_insert_with(|| ptr.to_string());
        self.by_pointer.insert(ptr.to_string(), uri.to_string());
    }

    fn walk(&mut self, v: &Value, ptr: &str, base: &str, kw: &Keywords) {
        match v {
            Value::Object(m) => {
                let mut base = base.to_string();
                let hidden = kw.ref_hides_id && m.contains_key("$ref");
                if let Some(id) = m.get(kw.id).and_then(Value::as_str).filter(|_| !hidden) {
                    let resolved = resolve(&base, id);
                    let (doc, frag) = split_fragment(&resolved);
                    if doc != base {
                        base = doc.to_string();
                        self.add_resource(doc, ptr);
                    }
                    if !frag.is_empty() && !frag.starts_with('/') {
                        self.add_anchor(&base, frag, ptr);
                    }
                }
                if kw.anchors {
                    for key in ["$anchor", "$dynamicAnchor"] {
                        if let Some(name) = m.get(key).and_then(Value::as_str) {
                            self.add_anchor(&base, name, ptr);
                        }
                    }
                }
                for (k, sub) in m {
                    if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        self.walk(sub, &child(ptr, k), &base, kw);
                    }
                }
            }
            Value::Array(a) => {
                for (i, sub) in a.iter().enumerate() {
                    self.walk(sub, &child(ptr, &i.to_string()), base, kw);
                }
            }
            _ => {}
        }
    }

    fn add_anchor(&mut self, base: &str, name: &str, ptr: &str) {
        self.anchors
            .entry((base.to_string(), name.to_string()))
            .or_insert_with(|| ptr.to_string());
    }

    /// The base URI at `ptr`: that of the innermost resource holding it.
    fn base_at(&self, ptr: &str) -> &str {
        let mut at = ptr;
        loop {
            if let Some(uri) = self.by_pointer.get(at) {
                return uri;
            }
            match at.rfind('/') {
                Some(i) => at = &at[..i],
                None => return DEFAULT_BASE,
            }
        }
    }

    /// The JSON pointer reference `r`, met at `ptr`, names within this document.
    pub fn target(&self, r: &str, ptr: &str) -> Option<String> {
        let resolved = resolve(self.base_at(ptr), r);
        let (doc, frag) = split_fragment(&resolved);
        let resource = self.by_uri.get(doc)?;
        let frag = percent_decode(frag)?;
        if frag.is_empty() {
            Some(resource.clone())
        } else if frag.starts_with('/') {
            Some(format!("{resource}{frag}"))
        } else {
            self.anchors.get(&(doc.to_string(), frag)).cloned()
        }
    }
}

/// A URI without its fragment, and the fragment (empty when there is none).
fn split_fragment(uri: &str) -> (&str, &str) {
    uri.split_once('#').unwrap_or((uri, ""))
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The parts of a URI reference (RFC 3986, appendix B).
#[derive(Default)]
struct Parts<'u> {
    scheme: Option<&'u str>,
    authority: Option<&'u str>,
    path: &'u str,
    query: Option<&'u str>,
    fragment: Option<&'u str>,
}

fn parts(s: &str) -> Parts<'_> {
    let (s, fragment) = match s.split_once('#') {
        Some((a, f)) => (a, Some(f)),
        None => (s, None),
    };
    let (s, query) = match s.split_once('?') {
        Some((a, q)) => (a, Some(q)),
        None => (s, None),
    };
    let (scheme, s) = match s.find(':') {
        Some(i) if i > 0 && !s[..i].contains('/') && s.as_bytes()[0].is_ascii_alphabetic() => {
            (Some(&s[..i]), &s[i + 1..])
        }
        _ => (None, s),
    };
    let (authority, path) = match s.strip_prefix("//") {
        Some(rest) => {
            let end = rest.find('/').unwrap_or(rest.len());
            (Some(&rest[..end]), &rest[end..])
        }
        None => (None, s),
    };
    Parts {
        scheme,
        authority,
        path,
        query,
        fragment,
    }
}

/// RFC 3986, section 5.2.4: `.` and `..` segments taken out of `path` (a path that
/// ends in one of them ends in `/`).
fn remove_dot_segments(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    let mut trailing = false;
    for seg in path.split('/').skip(absolute as usize) {
        trailing = matches!(seg, "." | "..");
        match seg {
            "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    let mut joined = format!("{}{}", if absolute { "/" } else { "" }, out.join("/"));
    if trailing && !joined.ends_with('/') {
        joined.push('/');
    }
    joined
}

/// Reference `r` resolved against base URI `base` (RFC 3986, section 5.2.2).
pub fn resolve(base: &str, r: &str) -> String {
    let b = parts(base);
    let r = parts(r);
    // a reference with a scheme or an authority of its own keeps its path, else the
    // base's scheme and authority are kept and the paths merge
    let own = r.scheme.is_some() || r.authority.is_some();
    let mut t = Parts {
        scheme: r.scheme.or(b.scheme),
        ..Parts::default()
    };
    let path = if own {
        t.authority = r.authority;
        t.query = r.query;
        remove_dot_segments(r.path)
    } else {
        t.authority = b.authority;
        t.query = if r.path.is_empty() {
            r.query.or(b.query)
        } else {
            r.query
        };
        if r.path.is_empty() {
            b.path.to_string()
        } else if r.path.starts_with('/') {
            remove_dot_segments(r.path)
        } else if b.authority.is_some() && b.path.is_empty() {
            remove_dot_segments(&format!("/{}", r.path))
        } else {
            let dir = b.path.rfind('/').map_or("", |i| &b.path[..=i]);
            remove_dot_segments(&format!("{dir}{}", r.path))
        }
    };
    let mut out = String::new();
    if let Some(s) = t.scheme {
        out.push_str(s);
        out.push(':');
    }
    if let Some(a) = t.authority {
        out.push_str("//");
        out.push_str(a);
    }
    out.push_str(&path);
    if let Some(q) = t.query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = r.fragment.filter(|f| !f.is_empty()) {
        out.push('#');
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::resolve;

    /// RFC 3986, section 5.4: the normal and abnormal examples it gives.
    #[test]
    fn resolves_as_rfc_3986_does() {
        let base = "http://a/b/c/d;p?q";
        let cases = [
            ("g:h", "g:h"),
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"),
            (";x", "http://a/b/c/;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
        ];
        for (r, want) in cases {
            assert_eq!(resolve(base, r), want, "{r}");
        }
        let urn = "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed";
        assert_eq!(resolve(urn, "#/$defs/bar"), format!("{urn}#/$defs/bar"));
    }
}
