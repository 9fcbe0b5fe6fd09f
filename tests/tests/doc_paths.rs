//! The documentation names files and folders that exist, and the architecture page's crate
//! table gives each crate's workspace dependencies. Files move often; each test here lists
//! every stale name with its file and line, so that the page or comment is fixed in the same
//! change.
//!
//! **What is read.**
//! - Every Markdown file of the repository (README.md, docs/*.md, a folder's README.md): inline
//!   code (`` `culling/src/visibility/system.rs` ``), the first word of each line of a fenced
//!   block that starts at its first column (the layout listing), and relative links. A word is
//!   a path when it is made of letters, digits and `_ - . / *` with at least one letter, and it
//!   holds a `/` or ends in `.rs`, `.glsl`, `.h`, `.md`, `.toml` or `.sh`. Words with spaces,
//!   `::` or `<placeholders>`, absolute paths and web links are not paths.
//! - Comments (`//`) of `.rs`, `.glsl` and `.h` files: words holding a `/` whose first part is a
//!   folder at the repository's root (`renderer/src/scene/records.rs`, `.ci/run`) or one of a
//!   crate's own folders (`src/`, `tests/`, `benches/`, `examples/`, `glsl/`, `spirv/`). Bare file
//!   names in comments are not checked: a comment about a folder names its files by themselves.
//!
//! **How a path resolves.** In order: from the repository's root; from the folder of the file
//! that names it (a link, a README's own files); from the crate of that file (`tests/fresh.rs`
//! in a comment of `shaders/`); else it must be the tail of some path of the repository, so a
//! name relative to the folder a paragraph is about (`tracked/plan.rs` in a paragraph about
//! `culling/src/visibility/`) passes when some folder has it. A bare file name in Markdown
//! (`holds.rs`) must be the name of some file. A `*` ends the path
//! (`shaders/glsl/engine/*.glsl` checks `shaders/glsl/engine/`). A folder a page or a
//! comment names must hold more than tests, unless it is a `tests` folder: one whose files are
//! all `tests.rs` or `*_tests.rs` is what is left behind when its code moved.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

/// Endings of a bare file name that a Markdown page is checked for.
const SOURCE_ENDINGS: [&str; 6] = [".rs", ".glsl", ".h", ".md", ".toml", ".sh"];

/// A crate's own folders, which its comments name relative to the crate.
const CRATE_FOLDERS: [&str; 6] = ["src", "tests", "benches", "examples", "glsl", "spirv"];

/// Every file and folder of the repository, as `/`-separated paths from its root.
struct Tree {
    files: HashSet<String>,
    folders: HashSet<String>,
    /// The last part of every file's path.
    file_names: HashSet<String>,
    /// The folders at the root (`.ci` among them).
    top: HashSet<String>,
}

impl Tree {
    fn read(root: &Path) -> Tree {
        let mut tree =
            Tree { files: HashSet::new(), folders: HashSet::new(), file_names: HashSet::new(), top: HashSet::new() };
        tree.walk(root, "");
        tree.top = tree.folders.iter().filter(|folder| !folder.contains('/')).cloned().collect();
        tree
    }

    /// Adds the files under `folder` (`relative` from the root), skipping build output and
    /// version control (`target*`, hidden folders but `.ci` and `.github`).
    fn walk(&mut self, folder: &Path, relative: &str) {
        let entries = std::fs::read_dir(folder).unwrap_or_else(|error| panic!("reading {}: {error}", folder.display()));
        for entry in entries {
            let entry = entry.expect("a readable folder entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if relative.is_empty() { name.clone() } else { format!("{relative}/{name}") };
            let kind = entry.file_type().expect("a readable file type");
            if kind.is_dir() {
                let hidden = name.starts_with('.') && name != ".ci" && name != ".github";
                if hidden || name.starts_with("target") {
                    continue;
                }
                self.folders.insert(path.clone());
                self.walk(&entry.path(), &path);
            } else {
                self.file_names.insert(name);
                self.files.insert(path);
            }
        }
    }

    fn exists(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        self.files.contains(path) || self.folders.contains(path)
    }

    /// Whether some file or folder of the repository ends with `/tail`.
    fn has_tail(&self, tail: &str) -> bool {
        let tail = format!("/{}", tail.trim_end_matches('/'));
        self.files.iter().chain(&self.folders).any(|path| path.ends_with(&tail))
    }

    /// The folder `path` resolves to, or the file; `None` when it does not resolve. `from` is
    /// the file that names it.
    fn resolve(&self, path: &str, from: &str) -> Option<String> {
        let own_folder = from.rsplit_once('/').map_or("", |(folder, _)| folder);
        let crate_folder = from.split_once('/').map_or("", |(folder, _)| folder);
        let joined = |base: &str| if base.is_empty() { path.to_owned() } else { normalize(&format!("{base}/{path}")) };
        [path.to_owned(), joined(own_folder), joined(crate_folder)]
            .into_iter()
            .find(|candidate| self.exists(candidate))
            .or_else(|| self.has_tail(path).then(|| path.to_owned()))
    }

    /// Whether `folder` (from the root) holds only test files (or nothing).
    fn holds_only_tests(&self, folder: &str) -> bool {
        let folder = folder.trim_end_matches('/');
        if !self.folders.contains(folder) || folder.rsplit('/').next().is_some_and(|name| name.contains("tests")) {
            return false;
        }
        let prefix = format!("{folder}/");
        self.files.iter().filter_map(|file| file.strip_prefix(&prefix)).all(|inside| {
            inside.split('/').next_back().is_some_and(|name| name == "tests.rs" || name.ends_with("_tests.rs"))
                || inside.split('/').any(|part| part == "tests")
        })
    }
}

/// `a/b/../c` as `a/c`, `a/./b` as `a/b`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    let mut normal = parts.join("/");
    if path.ends_with('/') {
        normal.push('/');
    }
    normal
}

/// `word` as a path to check, or `None` when it is no path (see the file's rules). A `*` ends
/// the path at the folder before it.
fn as_path(word: &str, bare_names: bool) -> Option<String> {
    let word = word.trim_end_matches(['.', ',', ';', ':', ')']);
    let allowed = |character: char| character.is_ascii_alphanumeric() || "_-./*".contains(character);
    if word.is_empty()
        || !word.chars().all(allowed)
        || !word.chars().any(|character| character.is_ascii_alphabetic())
        || word.starts_with(['/', '-', '*'])
        || word.contains("//")
    {
        return None;
    }
    if !word.contains('/') {
        return (bare_names && SOURCE_ENDINGS.iter().any(|ending| word.ends_with(ending))).then(|| word.to_owned());
    }
    match word.find('*') {
        Some(star) => {
            let folder = &word[..word[..star].rfind('/').map_or(0, |slash| slash + 1)];
            (!folder.is_empty()).then(|| folder.to_owned())
        }
        None => Some(word.to_owned()),
    }
}

/// The paths a Markdown page names, with their lines.
fn markdown_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut fenced = false;
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let mut words: Vec<&str> = Vec::new();
        if fenced {
            if !line.starts_with(char::is_whitespace) {
                words.extend(line.split_whitespace().next());
            }
        } else {
            // Inline code: the odd pieces between backticks.
            words.extend(line.split('`').skip(1).step_by(2).map(str::trim));
            // Relative links: `](target)`.
            for (_, rest) in line.match_indices("](").map(|(at, _)| line.split_at(at + 2)) {
                let target = rest.split(')').next().unwrap_or("").split('#').next().unwrap_or("");
                if !target.contains("://") && !target.starts_with("mailto:") {
                    words.push(target);
                }
            }
        }
        let paths = words.into_iter().filter_map(|word| as_path(word, true));
        found.extend(paths.map(|path| (index + 1, path)));
    }
    found
}

/// The paths the comments of a source file name, with their lines: words with a `/` whose
/// first part is a folder at the root or a crate's own folder.
fn comment_paths(text: &str, top: &HashSet<String>) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let Some(start) = line.find("//") else { continue };
        let words =
            line[start + 2..].split(|character: char| character.is_whitespace() || "`'\"(),[]<>".contains(character));
        for word in words {
            let Some(path) = as_path(word, false) else { continue };
            let first = path.split('/').next().unwrap_or("");
            if top.contains(first) || CRATE_FOLDERS.contains(&first) {
                found.push((index + 1, path));
            }
        }
    }
    found
}

fn repository_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate sits in the repository's root")
}

fn read(root: &Path, file: &str) -> String {
    std::fs::read_to_string(root.join(file)).unwrap_or_else(|error| panic!("reading {file}: {error}"))
}

/// What is wrong with `path` named in `file`, if anything.
fn problem(tree: &Tree, file: &str, path: &str) -> Option<String> {
    match tree.resolve(path, file) {
        None if !path.contains('/') && tree.file_names.contains(path) => None,
        None => Some(format!("`{path}` does not exist")),
        Some(found) if tree.holds_only_tests(&found) => Some(format!("`{path}` holds only tests")),
        Some(_) => None,
    }
}

fn report(problems: &[String], what: &str) {
    assert!(
        problems.is_empty(),
        "{} problem(s) {what} (see the rules in tests/tests/doc_paths.rs):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn markdown_pages_name_paths_that_exist() {
    let root = repository_root();
    let tree = Tree::read(root);
    let mut pages: Vec<&String> = tree.files.iter().filter(|file| file.ends_with(".md")).collect();
    pages.sort();
    assert!(pages.iter().any(|page| page.as_str() == "docs/architecture.md"), "the architecture page is read");
    let mut problems = Vec::new();
    for page in pages {
        for (line, path) in markdown_paths(&read(root, page)) {
            if let Some(problem) = problem(&tree, page, &path) {
                problems.push(format!("{page}:{line}: {problem}"));
            }
        }
    }
    report(&problems, "in the Markdown pages");
}

#[test]
fn source_comments_name_paths_that_exist() {
    let root = repository_root();
    let tree = Tree::read(root);
    let mut sources: Vec<&String> =
        tree.files.iter().filter(|file| [".rs", ".glsl", ".h"].iter().any(|ending| file.ends_with(ending))).collect();
    sources.sort();
    let mut problems = Vec::new();
    for source in sources {
        for (line, path) in comment_paths(&read(root, source), &tree.top) {
            if let Some(problem) = problem(&tree, source, &path) {
                problems.push(format!("{source}:{line}: {problem}"));
            }
        }
    }
    report(&problems, "in source comments");
}

/// The workspace's members, from the root manifest.
fn workspace_members(root: &Path) -> BTreeSet<String> {
    let manifest = read(root, "Cargo.toml");
    let list = manifest.split("members = [").nth(1).and_then(|rest| rest.split(']').next()).expect("a members list");
    list.split('"').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The workspace members among a manifest's `[dependencies]`.
fn member_dependencies(manifest: &str, members: &BTreeSet<String>) -> BTreeSet<String> {
    let section = manifest.split("\n[dependencies]\n").nth(1).map_or("", |rest| rest.split("\n[").next().unwrap_or(""));
    section
        .lines()
        .filter_map(|line| line.split(['.', ' ', '=']).next())
        .filter(|name| members.contains(*name))
        .map(str::to_owned)
        .collect()
}

/// The rows of the first table after `heading` in `page`: its cells, trimmed.
fn table_rows<'a>(page: &'a str, heading: &str) -> Vec<Vec<&'a str>> {
    let after = page.split(heading).nth(1).unwrap_or_else(|| panic!("the page has a `{heading}` section"));
    after
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| line.trim_matches('|').split('|').map(str::trim).collect())
        .collect()
}

#[test]
fn the_crate_tables_list_every_crate_and_its_workspace_dependencies() {
    let root = repository_root();
    let members = workspace_members(root);
    let mut problems = Vec::new();
    let architecture = read(root, "docs/architecture.md");
    let mut listed = BTreeSet::new();
    for row in table_rows(&architecture, "\n## Crates\n") {
        let [folder, name, _, depends_on] = row[..] else {
            problems.push(format!("docs/architecture.md, crate table: a row of {} cells: {row:?}", row.len()));
            continue;
        };
        let folder = folder.trim_matches('`').trim_end_matches('/');
        listed.insert(folder.to_owned());
        if name.trim_matches('`') != folder || !members.contains(folder) {
            problems.push(format!("docs/architecture.md, crate table: `{folder}` is not a member named so"));
            continue;
        }
        if depends_on == "everything" {
            continue;
        }
        let written: BTreeSet<String> = depends_on
            .split(|character: char| !(character.is_ascii_alphanumeric() || character == '_'))
            .filter(|word| members.contains(*word))
            .map(str::to_owned)
            .collect();
        let actual = member_dependencies(&read(root, &format!("{folder}/Cargo.toml")), &members);
        if written != actual {
            problems.push(format!(
                "docs/architecture.md, crate table: `{folder}` depends on {actual:?} (Cargo.toml), the page says {written:?}"
            ));
        }
    }
    if listed != members {
        problems.push(format!("docs/architecture.md, crate table: rows {listed:?}, members {members:?}"));
    }
    let readme = read(root, "README.md");
    let readme_rows: BTreeSet<String> = table_rows(&readme, "\n## Layout\n")
        .iter()
        .filter_map(|row| row.first())
        .map(|folder| folder.trim_matches('`').trim_end_matches('/').to_owned())
        .collect();
    if readme_rows != members {
        problems.push(format!("README.md, layout table: rows {readme_rows:?}, members {members:?}"));
    }
    report(&problems, "in the crate tables");
}

#[test]
fn the_rules_read_paths_as_documented() {
    assert_eq!(as_path("culling/src/visibility/system.rs", true).as_deref(), Some("culling/src/visibility/system.rs"));
    assert_eq!(as_path("render_graph/src/passes/*.rs", true).as_deref(), Some("render_graph/src/passes/"));
    assert_eq!(as_path("holds.rs", true).as_deref(), Some("holds.rs"));
    assert_eq!(as_path("holds.rs", false), None, "bare names are not read in comments");
    for not_a_path in ["ecs::Lod", "cargo test -p culling", "z / w", "<group>/x.glsl", "/proc/self/status", "1/2"] {
        assert_eq!(as_path(not_a_path, true), None, "{not_a_path}");
    }
    assert_eq!(normalize("docs/../README.md"), "README.md");
    let page = "See `docs/meshes.md`, [the page](docs/architecture.md#crates) and\n```\nruntime/src/   the runtime\n    indented/not.rs\n```\n";
    let paths: Vec<String> = markdown_paths(page).into_iter().map(|(_, path)| path).collect();
    assert_eq!(paths, ["docs/meshes.md", "docs/architecture.md", "runtime/src/"]);
    let top: HashSet<String> = ["renderer".to_owned()].into();
    let comments = comment_paths("let x = 1; // see renderer/src/lib.rs and x/w, `tests/fresh.rs`.\n", &top);
    assert_eq!(comments, [(1, "renderer/src/lib.rs".to_owned()), (1, "tests/fresh.rs".to_owned())]);
}
