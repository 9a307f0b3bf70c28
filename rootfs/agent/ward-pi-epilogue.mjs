// ward-pi's epilogue: run by ward-pi on the host after every session (and
// at the next start, when the last one was never finished), in a container
// of its own, confined by ward as the session was, with the project mounted
// at its path, the agent's git as in the session, and nothing else of the
// host. The agent's processes are gone; what they left is read here, inside
// the sandbox, never by a tool on the host (a symbolic link or a FIFO planted
// for the host finds no host path here, and no hang reaches the person).
//
//   node ward-pi-epilogue.mjs --since NS [--git]
//
// 1. Every git repository inside the project that changed during the
//    session (any entry under it with a ctime at or after NS, which no
//    process can set back) is made one that no git finds: a `.git` of any
//    kind (a directory, a gitfile naming another place) is renamed
//    `.git.ward-pi-quarantine`, a bare repository (HEAD, objects/, refs/) has
//    its HEAD renamed. The person's next `git` in that directory runs
//    nothing of it (core.fsmonitor, hooks, aliases, a commondir elsewhere).
//    With --git the project's own .git is ward-pi's (the agent's copy of the
//    repository's state, mounted there): it is not scanned.
// 2. With --git: the agent's commits, branches, tags, HEAD and index, as one
//    git bundle on stdout. The index is a commit of its tree (refs/ward-pi/index,
//    whose message names HEAD); a detached HEAD is refs/ward-pi/head. ward-pi
//    fetches the bundle with git's own checks for objects from an untrusted
//    peer and decides on the host what of it to apply.
// What it did is reported on stderr, a line each, after "ward-pi-epilogue: ".
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const argv = process.argv.slice(2);
const sinceAt = argv.indexOf("--since");
if (sinceAt < 0 || !/^\d{1,25}$/.test(argv[sinceAt + 1] || "")) {
  process.stderr.write("ward-pi-epilogue: usage: --since NS [--git]\n");
  process.exit(2);
}
const since = BigInt(argv[sinceAt + 1]);
const withGit = argv.includes("--git");
const say = (msg) => process.stderr.write(`ward-pi-epilogue: ${msg}\n`);
const show = (p) => JSON.stringify(path.relative(process.cwd(), p) || ".");

// true when p, or anything beneath it (no symbolic link followed), changed
// at or after `since`: ctime is the kernel's, set on every write, rename,
// link and chmod, and no call sets it back
function changed(p) {
  let st;
  try {
    st = fs.lstatSync(p, { bigint: true });
  } catch {
    return false;
  }
  if (st.ctimeNs >= since) return true;
  if (!st.isDirectory()) return false;
  let names = [];
  try {
    names = fs.readdirSync(p);
  } catch {
    return false;
  }
  return names.some((n) => changed(path.join(p, n)));
}

function freeName(p) {
  for (let i = 0; ; i++) {
    const n = i ? `${p}.ward-pi-quarantine-${i}` : `${p}.ward-pi-quarantine`;
    try {
      fs.lstatSync(n);
    } catch {
      return n;
    }
  }
}

// Anything that stops the check is fatal (exit 3): ward-pi then keeps the
// session unfinished and starts nothing until it is checked.
function fatal(msg) {
  say(msg);
  process.exitCode = 3;
}

// A directory of the agent's uid it made unreadable or unwritable (chmod
// is not Landlock's to refuse): its owner's rights back first, so that
// nothing can be hidden from the walk or kept from its rename.
function own(dir) {
  try {
    const st = fs.lstatSync(dir);
    if (st.isDirectory() && (st.mode & 0o700) !== 0o700) fs.chmodSync(dir, (st.mode & 0o7777) | 0o700);
  } catch {
    /* not ours: as before */
  }
}

function quarantine(p, what) {
  const n = freeName(p);
  own(path.dirname(p));
  try {
    fs.renameSync(p, n);
    say(`quarantined ${what} ${show(p)}: renamed ${show(n)}, where no git finds it`);
  } catch (e) {
    fatal(`could not quarantine ${what} ${show(p)}: ${e.code || e.message}`);
  }
}

// What git's discovery could take for a repository in this directory: an
// entry named HEAD of any kind (git follows a symbolic link there) beside
// objects, refs or a commondir of any kind (it asks only that they be
// reachable, and commondir names them elsewhere). Names compared without
// case: on a case-insensitive filesystem git finds ".GIT" and "head".
const lower = (n) => n.toLowerCase();
function gitdirShaped(ents) {
  const names = new Set(ents.map((e) => lower(e.name)));
  return names.has("head") && (names.has("objects") || names.has("refs") || names.has("commondir"));
}

function walk(dir, top) {
  let ents;
  own(dir);
  try {
    ents = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if (e.code === "ENOENT") return;
    return fatal(`could not read ${show(dir)} to check it: ${e.code || e.message}`);
  }
  // (at the top of a repository, git finds its .git before the top itself)
  if (!(top && withGit) && gitdirShaped(ents) && changed(dir))
    for (const e of ents)
      if (lower(e.name) === "head") quarantine(path.join(dir, e.name), "a repository's HEAD");
  for (const e of ents) {
    const p = path.join(dir, e.name);
    if (lower(e.name) === ".git") {
      if (!(top && withGit) && changed(p)) quarantine(p, "a .git");
      continue;
    }
    // (a Dirent of a symbolic link is never a directory: none is followed)
    if (e.isDirectory()) walk(p, false);
  }
}

// The agent's git directory as git would read it: every file git opens a
// regular one (a FIFO there would hold git, and the epilogue, forever),
// no symbolic link. Else its git is not taken (exit 4).
function gitdirSane(gd) {
  const bad = [];
  const look = (p, depth) => {
    let st;
    try {
      st = fs.lstatSync(p);
    } catch {
      return;
    }
    if (st.isSymbolicLink() || !(st.isFile() || st.isDirectory())) bad.push(path.relative(gd, p));
    else if (st.isDirectory() && depth < 64) for (const n of fs.readdirSync(p)) look(path.join(p, n), depth + 1);
  };
  for (const n of ["HEAD", "index", "packed-refs", "config", "ward-pi-start", "refs", "info", "logs", "commondir"])
    look(path.join(gd, n), 0);
  return bad;
}

walk(process.cwd(), true);

let gitOk = withGit;
if (withGit) {
  // the agent's git directory: where .git's gitfile names it, or .git itself
  let gd = path.join(process.cwd(), ".git");
  try {
    const line = fs.readFileSync(gd, "utf8").split("\n")[0];
    if (line.startsWith("gitdir: ")) gd = line.slice(8);
  } catch {
    /* a directory */
  }
  const bad = gitdirSane(gd);
  if (bad.length) {
    say(`the agent's git directory holds what git would not read safely (${bad.slice(0, 3).map(JSON.stringify).join(", ")}): its git is not taken`);
    process.exitCode = 4;
    gitOk = false;
  }
}
if (gitOk) {
  const git = (args, input) =>
    execFileSync("git", ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "user.name=ward-pi",
      "-c", "user.email=ward-pi@localhost", "-c", "commit.gpgSign=false", ...args],
      { encoding: "utf8", input, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] }).trim();
  const tryGit = (args) => {
    try {
      return git(args);
    } catch {
      return "";
    }
  };
  let head = tryGit(["symbolic-ref", "-q", "HEAD"]);
  let detached = "";
  if (head) head = `ref: ${head}`;
  else {
    detached = tryGit(["rev-parse", "-q", "--verify", "HEAD^{commit}"]);
    head = detached || "none";
  }
  let tree = tryGit(["write-tree"]);
  let what = "INDEX tree";
  if (!tree) {
    tree = git(["hash-object", "-t", "tree", "-w", "--stdin"], "");
    what = "INDEX unmerged";
  }
  const commit = tryGit(["rev-parse", "-q", "--verify", "HEAD^{commit}"]) || "none";
  // every branch and tag by name: a bundle leaves out a ref whose commit
  // the host has already (a new branch where HEAD was), these lines do not
  const refs = tryGit(["for-each-ref", "--format=REF %(objectname) %(refname)", "refs/heads", "refs/tags"]);
  const idx = git(["commit-tree", tree, "-m", `ward-pi: the agent's index\n\nHEAD ${head}\nHEADCOMMIT ${commit}\n${what}\n${refs}`]);
  git(["update-ref", "refs/ward-pi/index", idx]);
  const wanted = ["--branches", "--tags", "refs/ward-pi/index"];
  if (detached) {
    git(["update-ref", "refs/ward-pi/head", detached]);
    wanted.push("refs/ward-pi/head");
  }
  // the tips the session started from, which the host has (ward-pi wrote
  // them; if the agent changed them the bundle is only larger, or refused)
  let tips = [];
  try {
    const gd = git(["rev-parse", "--absolute-git-dir"]);
    tips = fs.readFileSync(path.join(gd, "ward-pi-start"), "utf8").split("\n").filter((t) => /^[0-9a-f]{40,64}$/.test(t));
  } catch {
    /* none: a repository without commits */
  }
  const r = spawnSync("git", ["bundle", "create", "-q", "-", ...wanted, ...(tips.length ? ["--not", ...tips] : [])],
    { stdio: ["ignore", "inherit", "pipe"] });
  if (r.status !== 0) {
    say(`git bundle: ${(r.stderr || "").toString().trim().split("\n").pop()}`);
    process.exitCode = 4;
  }
}
