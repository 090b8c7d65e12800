/**
 * How much harm a shell command of an exec approval can do, read from the command itself: the Gateway
 * sends no severity for exec approvals, and a destructive command must never look harmless. Pure and
 * conservative: a command that deletes, overwrites, pushes, deploys or pipes into a shell is critical,
 * anything else a warning (running a command is never routine).
 *
 * The command is split like a shell would at its operators (`&&`, `||`, `;`, `|`, `&`, newlines,
 * `$(…)`, backticks), quotes respected, so `echo "rm -rf /"` is not a deletion while `bash -c "rm -rf /"`
 * is (the string a shell runs is read as a command too).
 */

export type CommandRisk = "deletes" | "overwrites" | "pushes" | "deploys" | "pipes-to-shell";

export type CommandAssessment = { severity: "warning" | "critical"; risks: CommandRisk[] };

type Token = { kind: "word"; text: string; quoted: boolean } | { kind: "op"; text: string };

const OPERATORS = [
  "&&",
  "||",
  ";;",
  "|&",
  ">>",
  "&>",
  ">|",
  "$(",
  "<(",
  ">(",
  "|",
  ";",
  "&",
  "\n",
  "`",
  "(",
  ")",
  ">",
  "<",
];

/** Splits a command into words and operators; quotes group, backslashes escape. */
function tokenize(command: string): Token[] {
  const tokens: Token[] = [];
  let word = "";
  let quoted = false;
  let inWord = false;
  const flush = () => {
    if (inWord) tokens.push({ kind: "word", text: word, quoted });
    word = "";
    quoted = false;
    inWord = false;
  };
  for (let i = 0; i < command.length; i++) {
    const char = command[i]!;
    if (char === "\\" && i + 1 < command.length) {
      word += command[++i];
      inWord = true;
      continue;
    }
    if (char === "'" || char === '"') {
      const end = command.indexOf(char, i + 1);
      const stop = end < 0 ? command.length : end;
      word += command.slice(i + 1, stop);
      quoted = true;
      inWord = true;
      i = stop;
      continue;
    }
    if (char === " " || char === "\t" || char === "\r") {
      flush();
      continue;
    }
    // `2>&1`, `2>file`: a file descriptor number belongs to the redirection, not to the words.
    const operator = OPERATORS.find((op) => command.startsWith(op, i));
    if (operator) {
      if (
        /^\d+$/.test(word) &&
        !quoted &&
        (operator === ">" || operator === ">>" || operator === "<")
      )
        inWord = false;
      flush();
      tokens.push({ kind: "op", text: operator });
      i += operator.length - 1;
      continue;
    }
    if (char === "#" && !inWord) break;
    word += char;
    inWord = true;
  }
  flush();
  return tokens;
}

type Simple = { words: Token[]; pipedFrom: boolean; redirects: string[] };

/** The simple commands of a command line, each with the files it writes over (`>`, `>|`, `&>`). */
function simpleCommands(tokens: Token[]): Simple[] {
  const commands: Simple[] = [];
  let current: Simple = { words: [], pipedFrom: false, redirects: [] };
  const close = (pipedNext: boolean) => {
    if (current.words.length > 0 || current.redirects.length > 0) commands.push(current);
    current = { words: [], pipedFrom: pipedNext, redirects: [] };
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === "word") {
      current.words.push(token);
      continue;
    }
    if (token.text === ">" || token.text === ">|" || token.text === "&>") {
      const target = tokens[i + 1];
      if (target?.kind === "word") {
        current.redirects.push(target.text);
        i++;
      } else if (target?.kind === "op" && target.text === "&") {
        i += 2; // `>&2`: a descriptor, not a file
      }
      continue;
    }
    if (token.text === ">>" || token.text === "<") {
      if (tokens[i + 1]?.kind === "word") i++;
      continue;
    }
    close(token.text === "|" || token.text === "|&");
  }
  close(false);
  return commands;
}

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"]);
const WRAPPERS = new Set([
  "sudo",
  "doas",
  "env",
  "nohup",
  "time",
  "nice",
  "ionice",
  "command",
  "exec",
  "xargs",
  "timeout",
  "watch",
  "stdbuf",
]);
const HARMLESS_TARGETS = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/;

const DELETERS = new Set(["rm", "rmdir", "shred", "unlink", "srm", "wipefs", "mkfs", "dropdb"]);
const OVERWRITERS = new Set(["mv", "cp", "dd", "truncate", "install", "rsync"]);
const DEPLOYERS = new Set([
  "terraform",
  "pulumi",
  "ansible-playbook",
  "vercel",
  "netlify",
  "fly",
  "flyctl",
  "serverless",
  "sls",
  "cdk",
  "kubectl",
  "helm",
  "eb",
  "firebase",
  "wrangler",
  "heroku",
  "cap",
]);

function basename(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1);
}

/** The program and its arguments, past environment assignments and wrappers such as `sudo` or `env`. */
function programOf(words: string[]): { program: string; args: string[] } | null {
  let i = 0;
  while (i < words.length) {
    const word = words[i]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) i++;
    else if (WRAPPERS.has(basename(word))) {
      i++;
      // A wrapper's own options (`sudo -u root`, `timeout 10`) come before the program.
      while (i < words.length && (words[i]!.startsWith("-") || /^\d+[smhd]?$/.test(words[i]!))) i++;
    } else break;
  }
  if (i >= words.length) return null;
  return { program: basename(words[i]!), args: words.slice(i + 1) };
}

const hasFlag = (args: string[], ...flags: string[]) =>
  args.some(
    (arg) =>
      flags.includes(arg) ||
      flags.some((flag) => flag.length === 2 && /^-[A-Za-z]+$/.test(arg) && arg.includes(flag[1]!)),
  );

function risksOf(command: Simple, depth: number): Set<CommandRisk> {
  const risks = new Set<CommandRisk>();
  if (command.redirects.some((target) => !HARMLESS_TARGETS.test(target))) risks.add("overwrites");
  const found = programOf(command.words.map((word) => word.text));
  if (!found) return risks;
  const { program, args } = found;
  const sub = args.find((arg) => !arg.startsWith("-")) ?? "";
  const all = [program, ...args].join(" ");

  if (SHELLS.has(program) || program === "eval" || program === "source" || program === ".") {
    const script = program === "eval" ? args.join(" ") : args[args.indexOf("-c") + 1];
    if (script !== undefined && (args.includes("-c") || program === "eval")) {
      if (depth < 3) for (const risk of assess(script, depth + 1).risks) risks.add(risk);
      // Code that is generated or downloaded at run time (`eval "$(curl …)"`) runs unseen.
      if (script.includes("$(") || script.includes("`")) risks.add("pipes-to-shell");
    }
    // Fed from a pipe, or a script that is a download (`bash <(curl …)`): whatever arrives runs.
    if (
      command.pipedFrom ||
      args.length === 0 ||
      (!args.includes("-c") && program !== "eval" && args.every((arg) => arg.startsWith("-")))
    )
      risks.add("pipes-to-shell");
  }
  if (DELETERS.has(program) || program.startsWith("mkfs.")) risks.add("deletes");
  if (
    program === "find" &&
    (args.includes("-delete") || /-exec(dir)?\s+(\S*\/)?(rm|shred|unlink)\b/.test(all))
  )
    risks.add("deletes");
  if (program === "git") {
    if (sub === "push") risks.add("pushes");
    if (
      sub === "clean" ||
      (sub === "branch" && hasFlag(args, "-D", "--delete")) ||
      (sub === "stash" && args.includes("drop"))
    )
      risks.add("deletes");
    if (
      (sub === "reset" && args.includes("--hard")) ||
      (sub === "checkout" && args.includes("--")) ||
      sub === "restore" ||
      (sub === "push" && hasFlag(args, "-f", "--force", "--force-with-lease"))
    )
      risks.add("overwrites");
  }
  if ((program === "docker" || program === "podman") && ["push"].includes(sub)) risks.add("pushes");
  if (
    (program === "docker" || program === "podman") &&
    (["rm", "rmi", "prune"].includes(sub) || args.includes("prune"))
  )
    risks.add("deletes");
  if (
    ["npm", "pnpm", "yarn", "cargo", "gem", "twine", "poetry", "flit"].includes(program) &&
    (sub === "publish" || sub === "upload" || sub === "push")
  )
    risks.add("pushes");
  if (program === "gh" && /\b(release create|pr merge|repo delete)\b/.test(all))
    risks.add("pushes");
  if (program === "kubectl" && sub === "delete") risks.add("deletes");
  if (program === "terraform" && sub === "destroy") risks.add("deletes");
  if (
    (DEPLOYERS.has(program) &&
      ([
        "apply",
        "deploy",
        "up",
        "install",
        "upgrade",
        "rollout",
        "release",
        "publish",
        "destroy",
      ].includes(sub) ||
        program === "ansible-playbook")) ||
    args.some(
      (arg) =>
        /(^|[:\-_/])deploy([:\-_]|$)/i.test(arg) || arg === "--prod" || arg === "--production",
    )
  ) {
    risks.add("deploys");
  }
  if (/^deploy/i.test(program)) risks.add("deploys");
  if (
    OVERWRITERS.has(program) &&
    !(program === "cp" && hasFlag(args, "-n", "--no-clobber")) &&
    !(program === "mv" && hasFlag(args, "-n", "--no-clobber"))
  )
    risks.add("overwrites");
  if (
    program === "sed" &&
    args.some(
      (arg) =>
        arg === "-i" ||
        arg.startsWith("-i") ||
        arg === "--in-place" ||
        arg.startsWith("--in-place="),
    )
  )
    risks.add("overwrites");
  if (
    program === "tee" &&
    !hasFlag(args, "-a", "--append") &&
    args.some((arg) => !arg.startsWith("-") && !HARMLESS_TARGETS.test(arg))
  )
    risks.add("overwrites");
  if (program === "chmod" || program === "chown") {
    if (hasFlag(args, "-R", "--recursive")) risks.add("overwrites");
  }
  if (
    ["psql", "mysql", "sqlite3", "mongo", "mongosh", "redis-cli"].includes(program) &&
    /\b(drop\s+(table|database|schema)|truncate|delete\s+from|flushall|flushdb|dropDatabase)\b/i.test(
      all,
    )
  )
    risks.add("deletes");
  return risks;
}

const ORDER: readonly CommandRisk[] = [
  "deletes",
  "overwrites",
  "pushes",
  "deploys",
  "pipes-to-shell",
];

function assess(command: string, depth: number): CommandAssessment {
  const risks = new Set<CommandRisk>();
  for (const simple of simpleCommands(tokenize(command)))
    for (const risk of risksOf(simple, depth)) risks.add(risk);
  const ordered = ORDER.filter((risk) => risks.has(risk));
  return { severity: ordered.length > 0 ? "critical" : "warning", risks: ordered };
}

export function assessCommand(command: string): CommandAssessment {
  return assess(command, 0);
}

/**
 * The command's first words, for a title: whitespace collapsed, cut at a word boundary with an
 * ellipsis when longer than `limit` characters (never cut silently).
 */
export function commandHeadline(command: string, limit = 48): string {
  const flat = command.replace(/\s+/g, " ").trim();
  if (flat.length <= limit) return flat;
  const cut = flat.slice(0, limit - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > limit / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
