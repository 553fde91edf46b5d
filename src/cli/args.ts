import { type ParseArgsConfig, parseArgs } from "node:util";
import { CliError } from "./cli-error.js";

/**
 * Command-line mistakes as one line that names the mistake and the nearest valid name ("did you
 * mean --port?"), exit status 2. node:util's parseArgs throws a TypeError whose stack reaches the
 * user and whose message may span lines; every command parses its flags through here instead.
 */

/** Edit distance with adjacent transpositions counted as one edit: `--prot` is one from `--port`. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate nearest to what was typed, when it is near enough to be what was meant: within a
 * third of its length in edits (at least one), or one the typed word begins (`--data` for
 * `--data-dir`). Undefined when nothing is close: a far-fetched guess misleads more than none.
 */
export function nearest(typed: string, candidates: readonly string[]): string | undefined {
  const word = typed.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = distance(word, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  if (best !== undefined && bestDistance <= Math.max(1, Math.floor(best.length / 3))) return best;
  const bare = word.replace(/^-+/, "");
  if (bare.length >= 3) return candidates.find((c) => c.replace(/^-+/, "").startsWith(bare));
  return undefined;
}

/** "; did you mean X?" when one is near, else "". */
export const didYouMean = (typed: string, candidates: readonly string[]): string => {
  const near = nearest(typed, candidates);
  return near ? `; did you mean ${near}?` : "";
};

/** A command's flags, as node:util's parseArgs takes them. */
export type FlagOptions = NonNullable<ParseArgsConfig["options"]>;

/** Every spelling of the command's flags, `--help` included (dispatch answers it before a command runs). */
function flagNames(options: FlagOptions): string[] {
  const names = ["--help", "-h"];
  for (const [name, o] of Object.entries(options)) {
    names.push(`--${name}`);
    if (o.short) names.push(`-${o.short}`);
  }
  return names;
}

/** parseArgs for command `command`; its mistakes become one-line CliErrors that point at `--help`. */
export function parseFlags<const T extends ParseArgsConfig & { options: FlagOptions }>(
  command: string,
  config: T,
) {
  try {
    return parseArgs(config);
  } catch (err) {
    throw usageError(command, config.options, err);
  }
}

function usageError(command: string, options: FlagOptions, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  if (!code.startsWith("ERR_PARSE_ARGS_")) return err;
  const message = (err as Error).message;
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const help = `(memctx ${command} --help lists every option)`;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    // `--prot=9000` arrives whole; the name is what precedes "=".
    const typed = quoted.split("=")[0]!;
    return new CliError(
      `${command}: unknown option ${typed}${didYouMean(typed, flagNames(options))} ${help}`,
    );
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    return new CliError(`${command} takes no argument '${quoted}' ${help}`);
  }
  // ERR_PARSE_ARGS_INVALID_OPTION_VALUE: a flag without its value, or a switch given one.
  const flag = quoted.split(" ")[0]!;
  if (/does not take an argument/.test(message)) {
    return new CliError(`${command}: ${flag} is a switch and takes no value ${help}`);
  }
  // "ambiguous": the next word began with a dash, so it was not taken as the value.
  const dash = /ambiguous/.test(message) ? ` (a value that begins with a dash goes as ${flag}=VALUE)` : "";
  return new CliError(`${command}: ${flag} needs a value${dash} ${help}`);
}
