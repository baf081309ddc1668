/**
 * Docs that cannot rot: README.md and docs/*.md are checked against the code they describe.
 *
 * - Every `weaviate-mcp` command shown in a shell block parses: its command exists (the built CLI's
 *   `--help` for it exits 0 and names it), each flag is one of that command's flags, an enum flag's
 *   value is one of its values, an integer flag's value an integer, the required flags are there,
 *   and the positional arguments are as many as the command takes. (`--help` appended to a leaf
 *   command does not reject unknown flags in @effect/cli, so the flags are checked against the
 *   command's own help rather than trusted to the parser.)
 * - Every `--flag` named in the prose is a flag of some command, or one of another program's, named
 *   below with its program; every command and every flag of the CLI is documented somewhere.
 * - Settings: the table of docs/configuration.md is exactly the settings schema, with each setting's
 *   flag and environment variable; every `WEAVIATE_MCP_*` variable named exists.
 * - docs/tools.md: every tool has a section whose argument table is its input schema, every call
 *   shown decodes against the tool's `inputSchema`, every `structuredContent` shown against its
 *   `outputSchema`, the descriptor shown is the real one; every prompt and resource template is in
 *   its table.
 * - docs/design.md: the layer picture is the transitive reduction of the real import graph of src/,
 *   and its table lists every direct import.
 * - Every relative link resolves to a file and, with a `#`, to a heading there; docs/README.md
 *   links every page; JSON blocks parse; the README stays within 250 lines.
 *
 * TypeScript and JavaScript blocks are compiled (and the embedding example run) against the packed
 * package by test/Package/Package.test.ts.
 */
import Ajv2020 from "ajv/dist/2020.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { withHistory as allTools } from "../../src/Catalogue/Tools/ToolsLive.ts"
import * as HistoryCatalogue from "../../src/Catalogue/HistoryCatalogue.ts"
import { descriptors as promptDescriptors } from "../../src/Catalogue/Prompts/Prompts.ts"
import { templates as resourceTemplates } from "../../src/Catalogue/Resources/ResourceUri.ts"
import * as Settings from "../../src/Daemon/Settings.ts"
import { run } from "../support/Cli.ts"
import { type Block, codeSpans, links, type Page, pages, ROOT } from "../support/Markdown.ts"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"

const docs = pages()
const page = (file: string): Page => {
  const found = docs.find((p) => p.file === file)
  if (found === undefined) throw new Error(`no page ${file}`)
  return found
}
const where = (b: { readonly file: string; readonly line: number }) => `${b.file}:${b.line}`
const allText = docs.map((p) => p.source).join("\n")

// ===== Shell words =====

/** Splits a command line as a POSIX shell would (quotes, escapes); `$VAR` stays a word. */
export const shellWords = (line: string): Array<string> => {
  const words: Array<string> = []
  let word = ""
  let inWord = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new Error(`unclosed ' in ${line}`)
      word += line.slice(i + 1, end)
      i = end
      inWord = true
    } else if (c === '"') {
      let j = i + 1
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && j + 1 < line.length) j++
        word += line[j]
      }
      if (j >= line.length) throw new Error(`unclosed " in ${line}`)
      i = j
      inWord = true
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i]
      inWord = true
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word)
      word = ""
      inWord = false
    } else if (c === "#" && !inWord) {
      break
    } else if (c === "|" || c === ";" || c === "&") {
      if (inWord) words.push(word)
      words.push(c === "&" && line[i + 1] === "&" ? (i++, "&&") : c === "|" && line[i + 1] === "|" ? (i++, "||") : c)
      word = ""
      inWord = false
    } else {
      word += c
      inWord = true
    }
  }
  if (inWord) words.push(word)
  return words
}

const SHELL_LANGUAGES = new Set(["sh", "bash", "shell", "console", "zsh"])

/** A `weaviate-mcp` command shown in a shell block: its words after the program name. */
interface Shown {
  readonly file: string
  readonly line: number
  readonly text: string
  readonly args: ReadonlyArray<string>
}

/** The logical lines of a shell block (continuations joined; console: only `$ ` lines). */
const commandLines = (block: Block): Array<{ readonly line: number; readonly text: string }> => {
  const out: Array<{ line: number; text: string }> = []
  const raw = block.text.split("\n")
  for (let i = 0; i < raw.length; i++) {
    let text = raw[i]!
    const line = block.line + 1 + i
    if (block.language === "console") {
      if (!text.startsWith("$ ")) continue
      text = text.slice(2)
    }
    while (text.trimEnd().endsWith("\\") && i + 1 < raw.length) text = text.trimEnd().slice(0, -1) + " " + raw[++i]!
    out.push({ line, text })
  }
  return out
}

const PROGRAM = [["weaviate-mcp"], ["npx", "weaviate-mcp"], ["npm", "run", "-s", "cli", "--"], ["npm", "run", "cli", "--"]]

/** Usage synopses (`[--flag]`) found in shell blocks, where only runnable commands belong. */
const synopses: Array<string> = []

/** Every `weaviate-mcp` command of every shell block, redirections left out. */
const shownCommands = (): Array<Shown> => {
  const out: Array<Shown> = []
  for (const p of docs) {
    for (const block of p.blocks.filter((b) => SHELL_LANGUAGES.has(b.language))) {
      for (const { line, text } of commandLines(block)) {
        if (/weaviate-mcp\b.*\s\[--/.test(text)) synopses.push(`${block.file}:${line}: ${text}`)
        const words = shellWords(text)
        // each command of a pipeline or list
        const segments: Array<Array<string>> = [[]]
        for (const w of words) {
          if (["|", "||", "&&", ";", "&"].includes(w)) segments.push([])
          else segments[segments.length - 1]!.push(w)
        }
        for (const segment of segments) {
          // environment assignments before the program
          while (segment.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(segment[0]!)) segment.shift()
          const program = PROGRAM.find((prefix) => prefix.every((w, i) => segment[i] === w))
          if (program === undefined) continue
          const args: Array<string> = []
          const rest = segment.slice(program.length)
          for (let i = 0; i < rest.length; i++) {
            if (/^(\d?>>?|<|&>)$/.test(rest[i]!)) i++ // a redirection and its target
            else if (/^(\d?>>?|<)\S/.test(rest[i]!)) continue
            else args.push(rest[i]!)
          }
          out.push({ file: p.file, line, text, args })
        }
      }
    }
  }
  return out
}

// ===== The CLI's help =====

interface Option {
  readonly name: string
  /** `boolean`, `text`, `integer`, `directory`, `file`, `redacted`, or the values of an enum. */
  readonly type: string | ReadonlyArray<string>
  readonly repeated: boolean
}

interface Help {
  readonly code: number | null
  readonly text: string
  /** The usage line, without `$ `. */
  readonly usage: string
  readonly options: ReadonlyMap<string, Option>
}

/** The options and usage a `--help` prints. */
const parseHelp = (code: number | null, text: string): Help => {
  const usage = /USAGE\n\n\$ ([\s\S]*?)\n\n/.exec(text)?.[1]?.replace(/\s+/g, " ") ?? ""
  const options = new Map<string, Option>()
  const section = text.slice(text.indexOf("\nOPTIONS\n"), text.indexOf("\nCOMMANDS\n") > 0 ? text.indexOf("\nCOMMANDS\n") : undefined)
  // `(-x, --name …)` or `(--name, --alias …)`: a flag with a short or a long alias.
  for (const m of section.matchAll(/^(?:\(-\w, )?\(?--([a-z][a-z0-9-]*)(?:, --([a-z][a-z0-9-]*))?\)?(?: (.+(?:\n {4}\S.*)*))?$/gm)) {
    const spec = (m[3] ?? "").replace(/\s+/g, " ").replace(/\)$/, "").trim()
    const repeated = spec.endsWith("...")
    const bare = spec.replace(/\.\.\.$/, "")
    for (const name of [m[1], m[2]]) {
      if (name === undefined) continue
      options.set(`--${name}`, {
        name: `--${name}`,
        type: bare === "" ? "boolean" : bare.includes(" | ") ? bare.split(" | ").map((v) => v.trim()) : bare,
        repeated
      })
    }
  }
  return { code, text, usage, options }
}

/** The command paths the root help lists: `serve`, `connections add`, `clients disconnect`, …. */
const commandPaths = (rootHelp: string): Array<ReadonlyArray<string>> => {
  const paths: Array<ReadonlyArray<string>> = []
  // A usage wraps onto lines of its own (indented, not starting with a capital: the description does):
  // a subcommand of a command with flags (`history … show`) is named on a later line.
  for (const m of rootHelp.matchAll(/^ {2}- (.*(?:\n {6}(?![A-Z]).*)*)$/gm)) {
    const tokens = m[1]!.trim().split(/\s+/)
    const head: Array<string> = []
    let depth = 0
    let afterFlag = false
    for (const token of tokens) {
      if (token.startsWith("<")) break
      const opens = (token.match(/\[/g) ?? []).length
      const closes = (token.match(/\]/g) ?? []).length
      if (depth === 0 && opens === 0) {
        if (token.startsWith("--")) afterFlag = true
        else if (!afterFlag && /^[a-z][a-z0-9-]*$/.test(token)) head.push(token)
      }
      if (opens > 0) afterFlag = false
      depth += opens - closes
    }
    if (head.length > 0 && !paths.some((p) => p.join(" ") === head.join(" "))) paths.push(head)
  }
  return paths
}

const BUILT_IN = new Set(["--help", "-h", "--version", "--wizard", "--completions", "--log-level"])

/**
 * Flags of other programs that the prose names, with the program: anything else that looks like a
 * flag must be one of ours.
 */
const FOREIGN_FLAGS: Readonly<Record<string, string>> = {
  "--cli": "the MCP Inspector",
  "--transport": "the MCP Inspector",
  "--header": "the MCP Inspector",
  "--method": "the MCP Inspector",
  "--silent": "vitest",
  "--inspect": "node",
  "--cpu-prof": "node",
  "--max-semi-space-size": "node",
  "--max-old-space-size": "node",
  "--trace-gc": "node",
  "--trace-opt": "node (V8)",
  "--heap-growing-percent": "node (V8)",
  "--noEmit": "tsc",
  "--scheme": "weaviate-server",
  "--tls-host": "weaviate-server",
  "--tls-port": "weaviate-server",
  "--tls-certificate": "weaviate-server",
  "--tls-key": "weaviate-server",
  "--text-info": "zenity",
  "--tls": "npm run weaviate:real / weaviate:sample",
  "--max-results": "npm run weaviate:real / weaviate:sample",
  "--echo-api-key": "npm run weaviate:sample",
  "--nodes": "npm run weaviate:cluster",
  "--list": "npm run test:mutation",
  "--incremental": "npm run test:mutation",
  "--reuid": "setpriv",
  "--regid": "setpriv",
  "--clear-groups": "setpriv",
  "--net": "unshare, nsenter",
  "--target": "nsenter",
  "--bogus": "none: docs/development.md's example of a flag the parser lets through with --help",
  "--flag": "none: a placeholder in docs/development.md"
}

const helps = new Map<string, Help>()
let paths: Array<ReadonlyArray<string>> = []
let shown: Array<Shown> = []

/** Runs `--help` for each command path, at most `bound` at a time. */
const fetchHelps = async (keys: ReadonlyArray<ReadonlyArray<string>>, bound: number) => {
  const queue = keys.filter((k) => !helps.has(k.join(" ")))
  const worker = async () => {
    for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
      const result = await run([...key, "--help"], { timeoutMs: 60_000 })
      helps.set(key.join(" "), parseHelp(result.code, result.stdout + result.stderr))
    }
  }
  await Promise.all(Array.from({ length: bound }, worker))
}

/** The longest listed command path the words start with. */
const pathOf = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  let best: ReadonlyArray<string> = []
  for (const path of paths) {
    if (path.length > best.length && path.every((w, i) => args[i] === w)) best = path
  }
  return best
}

beforeAll(async () => {
  const root = await run(["--help"], { timeoutMs: 60_000 })
  helps.set("", parseHelp(root.code, root.stdout + root.stderr))
  paths = commandPaths(root.stdout)
  shown = shownCommands()
  // One --help per command path, shown or not (every flag must be documented), 3 at a time.
  await fetchHelps(paths, 3)
}, 180_000)

describe("docs: the commands shown", () => {
  it("the CLI lists its commands, and the docs show some", () => {
    expect(helps.get("")!.code).toBe(0)
    expect(paths.map((p) => p.join(" "))).toEqual(expect.arrayContaining(["serve", "connections add", "tokens create", "browse", "activity", "clients disconnect", "setup", "export", "import"]))
    expect(shown.length).toBeGreaterThan(30)
  })

  it("every weaviate-mcp command in a shell block parses: its command, flags, values and arguments", () => {
    expect(synopses, "shell blocks show commands; a synopsis belongs in the prose").toEqual([])
    const problems: Array<string> = []
    for (const command of shown) {
      const path = pathOf(command.args)
      const help = helps.get(path.join(" "))!
      const at = `${where(command)}: weaviate-mcp ${command.args.join(" ")}`
      if (help.code !== 0) {
        problems.push(`${at}: \`${path.join(" ")} --help\` exited ${help.code}`)
        continue
      }
      if (path.length > 0 && !help.usage.startsWith(path[path.length - 1]!)) problems.push(`${at}: --help does not name ${path.join(" ")}`)
      const words = command.args.slice(path.length)
      if (path.length === 0 && words.some((w) => !w.startsWith("-"))) problems.push(`${at}: not a command of weaviate-mcp`)
      const asksHelp = words.some((w) => w === "--help" || w === "-h" || w === "--version")
      const positionals: Array<string> = []
      const given = new Set<string>()
      for (let i = 0; i < words.length; i++) {
        const word = words[i]!
        if (!word.startsWith("-") || word === "-") {
          positionals.push(word)
          continue
        }
        const [flag, inline] = word.includes("=") ? [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)] : [word, undefined]
        given.add(flag!)
        const option = help.options.get(flag!)
        if (option === undefined) {
          if (!BUILT_IN.has(flag!)) problems.push(`${at}: ${flag} is not a flag of ${path.join(" ") || "weaviate-mcp"}`)
          continue
        }
        if (option.type === "boolean") continue
        const value = inline ?? words[++i]
        if (value === undefined) {
          problems.push(`${at}: ${flag} needs a value`)
          continue
        }
        if (value.startsWith("$")) continue // a shell variable
        if (Array.isArray(option.type) && !option.type.includes(value)) problems.push(`${at}: ${flag} takes ${option.type.join(", ")}, not ${value}`)
        if (option.type === "integer" && !/^-?\d+$/.test(value)) problems.push(`${at}: ${flag} takes an integer, not ${value}`)
      }
      if (asksHelp) continue
      // Required flags: those the usage shows outside brackets.
      const required = [...help.usage.replace(/\[[^\]]*\]/g, "").matchAll(/(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]!)
      for (const flag of required) if (!given.has(flag)) problems.push(`${at}: ${flag} is required`)
      // Positional arguments: <A> required, [<B>] optional, `...` any number.
      const usage = help.usage
      const requiredArgs = [...usage.replace(/\[[^\]]*\]/g, "").matchAll(/<[^>]+>(\.\.\.)?/g)]
      const optionalArgs = [...usage.matchAll(/\[<[^>]+>\]/g)]
      const variadic = /<[^>]+>\.\.\./.test(usage)
      if (positionals.length < requiredArgs.length || (!variadic && positionals.length > requiredArgs.length + optionalArgs.length)) {
        problems.push(`${at}: takes ${requiredArgs.length}${optionalArgs.length > 0 ? `–${requiredArgs.length + optionalArgs.length}` : ""} arguments, got ${positionals.length} (${positionals.join(" ")})`)
      }
    }
    expect(problems).toEqual([])
  })

  it("every command of the CLI, and every flag of each, is documented", () => {
    const undocumented: Array<string> = []
    for (const path of paths) {
      if (!allText.includes(`weaviate-mcp ${path.join(" ")}`) && !allText.includes(`\`${path.join(" ")}`)) undocumented.push(path.join(" "))
      for (const flag of helps.get(path.join(" "))!.options.keys()) {
        if (!BUILT_IN.has(flag) && !new RegExp(`${flag}(?![a-z0-9-])`).test(allText)) undocumented.push(`${path.join(" ")} ${flag}`)
      }
    }
    expect(undocumented).toEqual([])
  })
})

describe("docs: flags and settings named in the prose", () => {
  it("every --flag in the prose is a weaviate-mcp flag, or another program's named in FOREIGN_FLAGS", () => {
    const ours = new Set([...helps.values()].flatMap((h) => [...h.options.keys(), ...[...h.text.matchAll(/--[a-z][a-z0-9-]*/g)].map((m) => m[0])]))
    const unknown: Array<string> = []
    for (const p of docs) {
      for (const line of p.prose) {
        for (const m of line.text.matchAll(/(?<![\w-])--([a-zA-Z][a-zA-Z0-9-]*)/g)) {
          const flag = `--${m[1]}`
          if (!ours.has(flag) && !BUILT_IN.has(flag) && FOREIGN_FLAGS[flag] === undefined) unknown.push(`${where(line)}: ${flag}`)
        }
      }
    }
    expect(unknown).toEqual([])
    // The list of other programs' flags holds only flags the docs name and that are not ours.
    expect(Object.keys(FOREIGN_FLAGS).filter((flag) => !new RegExp(`${flag}(?![a-z0-9-])`).test(allText) || ours.has(flag))).toEqual([])
  })

  it("the settings table of docs/configuration.md is the settings schema, with each flag and variable", async () => {
    const defaults = await Effect.runPromise(Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({})))
    const schemaKeys = [...Object.keys(defaults), "paused"].sort()
    const configuration = page("docs/configuration.md")
    const header = configuration.prose.findIndex((l) => l.text.startsWith("| Setting (`settings.json`)"))
    expect(header, "the settings table").toBeGreaterThan(-1)
    const rows: Array<Array<string>> = []
    for (const line of configuration.prose.slice(header + 2)) {
      if (!line.text.startsWith("|")) break
      rows.push(line.text.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim()))
    }
    const named = rows.map((r) => r[0]!).filter((c) => c !== "—").map((c) => c.replace(/`/g, ""))
    expect(named.sort()).toEqual(schemaKeys)
    const serve = helps.get("serve")!
    for (const [setting, flag, env] of rows) {
      const flagName = /`(--[a-z-]+)/.exec(flag!)?.[1]
      if (flagName !== undefined && setting !== "—") expect(serve.options.has(flagName), `${setting}: ${flagName}`).toBe(true)
      if (setting !== "—" && setting !== "`paused`") {
        const key = setting!.replace(/`/g, "")
        const constant = `WEAVIATE_MCP_${key.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase()}`
        expect(env, setting).toContain(constant)
      }
    }
  })

  it("every WEAVIATE_MCP_* variable named exists: a setting's, or read by the code", () => {
    const defaults = Effect.runSync(Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({})))
    const fromSettings = new Set(Object.keys(defaults).map((k) => `WEAVIATE_MCP_${k.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase()}`))
    const code = ["src", "test", "scripts", "bench", ".ci"].flatMap((dir) => filesUnder(NodePath.join(ROOT, dir))).concat([NodePath.join(ROOT, "package.json")])
      .map((f) => NodeFs.readFileSync(f, "utf8")).join("\n")
    const missing: Array<string> = []
    for (const m of allText.matchAll(/\bWEAVIATE_MCP_[A-Z0-9_]*[A-Z0-9]\b/g)) {
      if (!fromSettings.has(m[0]) && !code.includes(m[0])) missing.push(m[0])
    }
    expect([...new Set(missing)]).toEqual([])
  })

  it("a camelCase name on a prose line about settings is a setting", async () => {
    const defaults = await Effect.runPromise(Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({})))
    const keys = new Set([...Object.keys(defaults), "paused"])
    const wrong: Array<string> = []
    for (const p of docs) {
      for (const line of p.prose) {
        if (!/\bsettings?\b(?! schema)/i.test(line.text) || line.text.startsWith("|")) continue
        for (const span of codeSpans(line.text)) {
          if (/^[a-z]+(?:[A-Z][a-z]*)+$/.test(span) && /(Seconds|Ms|Limit|Lockout|Origins|Command|Level|Format)$/.test(span) && !keys.has(span)) {
            wrong.push(`${where(line)}: ${span}`)
          }
        }
      }
    }
    expect(wrong).toEqual([])
  })
})

const filesUnder = (dir: string): Array<string> =>
  !NodeFs.existsSync(dir) ? [] : NodeFs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !e.parentPath.includes("node_modules") && /\.(ts|mjs|js|cjs|json|sh)$|^run$/.test(e.name))
    .map((e) => NodePath.join(e.parentPath, e.name))

// ===== tools.md =====

describe("docs/tools.md is the catalogue", () => {
  // The daemon's catalogue: with a query history, hence search_query_history too.
  const tools = allTools({} as never, {} as never)
  const byName = new Map(tools.map((t) => [t.descriptor.name, t]))
  const toolsPage = page("docs/tools.md")
  const ajv = new Ajv2020.default({ strict: false, allErrors: true })

  /** The `### \`tool\`` section of each tool: from its heading to the next heading of level ≤ 3. */
  const section = (name: string) => {
    const start = toolsPage.headings.find((h) => h.level === 3 && h.text === `\`${name}\``)
    if (start === undefined) return undefined
    const next = toolsPage.headings.find((h) => h.line > start.line && h.level <= 3)
    return { from: start.line, to: next?.line ?? Number.MAX_SAFE_INTEGER }
  }

  it("every tool has a section whose argument table is its input schema", () => {
    for (const tool of tools) {
      const s = section(tool.descriptor.name)
      expect(s, tool.descriptor.name).toBeDefined()
      const rows = toolsPage.prose.filter((l) => l.line > s!.from && l.line < s!.to && /^\| `[a-z_]+`/.test(l.text))
      const documented = rows.map((l) => /^\| `([a-z_]+)`/.exec(l.text)![1]!).sort()
      const properties = Object.keys((tool.descriptor.inputSchema.properties ?? {}) as object).sort()
      expect(documented, tool.descriptor.name).toEqual(properties)
      for (const row of rows) {
        const name = /^\| `([a-z_]+)`/.exec(row.text)![1]!
        const required = ((tool.descriptor.inputSchema.required ?? []) as Array<string>).includes(name)
        expect(row.text.includes("(required)"), `${where(row)}: ${name} required`).toBe(required)
      }
    }
  })

  it("every call shown decodes against its tool's inputSchema, every structuredContent against its outputSchema", () => {
    let current: string | undefined
    let calls = 0
    let results = 0
    for (const block of toolsPage.blocks.filter((b) => b.language === "json")) {
      if (block.info.includes("excerpt")) continue
      const value = JSON.parse(block.text) as Record<string, unknown>
      if (typeof value.name === "string" && typeof value.arguments === "object" && !("inputSchema" in value)) {
        const tool = byName.get(value.name)
        expect(tool, where(block)).toBeDefined()
        const validate = ajv.compile(tool!.descriptor.inputSchema)
        expect(validate(value.arguments), `${where(block)}: ${JSON.stringify(validate.errors)}`).toBe(true)
        current = value.name
        calls++
      } else if (block.info.split(/\s+/).includes("structuredContent")) {
        expect(current, where(block)).toBeDefined()
        const validate = ajv.compile(byName.get(current!)!.descriptor.outputSchema!)
        expect(validate(value), `${where(block)}: ${current}: ${JSON.stringify(validate.errors)}`).toBe(true)
        results++
      } else if ("inputSchema" in value) {
        expect(value, where(block)).toEqual(JSON.parse(JSON.stringify(byName.get(value.name as string)!.descriptor)))
      }
    }
    expect(calls).toBeGreaterThanOrEqual(tools.length)
    expect(results).toBeGreaterThanOrEqual(tools.length)
  })

  it("every prompt and every resource template is in its table", () => {
    const tableRows = toolsPage.prose.filter((l) => l.text.startsWith("| `")).map((l) => l.text)
    for (const prompt of [...promptDescriptors, HistoryCatalogue.prompt]) {
      const row = tableRows.find((r) => r.startsWith(`| \`${prompt.name}\` |`))
      expect(row, prompt.name).toBeDefined()
      for (const argument of prompt.arguments) expect(row, `${prompt.name} ${argument.name}`).toContain(`${argument.name}${argument.required === true ? "*" : ""}`)
    }
    for (const template of [...resourceTemplates, HistoryCatalogue.template]) {
      expect(tableRows.some((r) => r.startsWith(`| \`${template.uriTemplate}\` |`)), template.uriTemplate).toBe(true)
    }
  })
})

// ===== design.md: the layers =====

describe("docs/design.md draws the real import graph", () => {
  /** Direct imports between the top-level folders (and entry files) of src/, from the sources. */
  const importGraph = () => {
    const edges = new Map<string, Set<string>>()
    const top = (file: string) => NodePath.relative(NodePath.join(ROOT, "src"), file).split(NodePath.sep)[0]!
    for (const file of filesUnder(NodePath.join(ROOT, "src")).filter((f) => f.endsWith(".ts"))) {
      const text = NodeFs.readFileSync(file, "utf8")
      for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)"(\.{1,2}\/[^"]+)"/g)) {
        const from = top(file)
        const to = top(NodePath.resolve(NodePath.dirname(file), m[1]!))
        if (from !== to) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to)
      }
    }
    return edges
  }
  const reachable = (edges: Map<string, Set<string>>, from: string) => {
    const seen = new Set<string>()
    const stack = [...(edges.get(from) ?? [])]
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      if (seen.has(next)) continue
      seen.add(next)
      stack.push(...(edges.get(next) ?? []))
    }
    return seen
  }
  const design = page("docs/design.md")

  it("the Mermaid picture is the transitive reduction of the imports of src/", () => {
    const edges = importGraph()
    const reduction = new Set<string>()
    for (const [from, tos] of edges) {
      for (const to of tos) {
        if (![...tos].some((other) => other !== to && reachable(edges, other).has(to))) reduction.add(`${from} -> ${to}`)
      }
    }
    const picture = design.blocks.find((b) => b.language === "mermaid" && b.text.startsWith("flowchart"))
    expect(picture, "the layers picture").toBeDefined()
    const labels = new Map<string, string>()
    const drawn = new Set<string>()
    for (const line of picture!.text.split("\n")) {
      for (const m of line.matchAll(/(\w+)\["([^"]+)"\]/g)) labels.set(m[1]!, m[2]!)
      const edge = /^\s*(\w+)(?:\["[^"]+"\])?\s*-->\s*(\w+)(?:\["[^"]+"\])?\s*$/.exec(line)
      if (edge !== null) drawn.add(`${edge[1]} -> ${edge[2]}`)
    }
    const named = new Set([...drawn].map((e) => e.split(" -> ").map((n) => labels.get(n) ?? n).join(" -> ")))
    expect([...named].sort()).toEqual([...reduction].sort())
  })

  it("the table lists every direct import of each folder", () => {
    const edges = importGraph()
    const rows = design.prose.filter((l) => /^\| [A-Z][a-z]+ \|/.test(l.text))
    const folders = [...edges.keys()].filter((f) => !f.endsWith(".ts"))
    for (const folder of [...folders, "Base", "Schema"]) {
      const row = rows.find((r) => r.text.startsWith(`| ${folder} |`))
      expect(row, folder).toBeDefined()
      const cells = row!.text.split("|").map((c) => c.trim())
      const listed = cells[3] === "—" ? [] : cells[3]!.split(", ").sort()
      expect(listed, folder).toEqual([...(edges.get(folder) ?? [])].sort())
    }
  })
})

// ===== Links, JSON, the README's length =====

describe("docs: links, JSON and length", () => {
  it("every relative link resolves to a file, and every #anchor to a heading there", () => {
    const broken: Array<string> = []
    for (const p of docs) {
      const prose = p.prose.map((l) => l.text).join("\n")
      for (const target of links(prose)) {
        if (/^[a-z]+:/i.test(target)) continue // http(s), mailto: not fetched
        const [path, anchor] = target.split("#") as [string, string | undefined]
        const file = path === "" ? p.file : NodePath.posix.normalize(NodePath.posix.join(NodePath.posix.dirname(p.file), path))
        if (!NodeFs.existsSync(NodePath.join(ROOT, file))) {
          broken.push(`${p.file}: ${target} (no file ${file})`)
          continue
        }
        if (anchor === undefined) continue
        const targetPage = docs.find((d) => d.file === file)
        if (targetPage === undefined || !targetPage.headings.some((h) => h.anchor === anchor)) broken.push(`${p.file}: ${target} (no heading #${anchor} in ${file})`)
      }
    }
    expect(broken).toEqual([])
  })

  it("docs/README.md links every page of docs/", () => {
    const index = page("docs/README.md")
    const linked = new Set(links(index.prose.map((l) => l.text).join("\n")).map((t) => t.split("#")[0]))
    for (const p of docs.filter((d) => d.file.startsWith("docs/") && d.file !== "docs/README.md")) {
      expect(linked.has(NodePath.posix.basename(p.file)), p.file).toBe(true)
    }
  })

  it("every JSON block parses: one document, or one per line", () => {
    for (const block of docs.flatMap((p) => p.blocks).filter((b) => b.language === "json" && !b.info.includes("excerpt"))) {
      const whole = (() => {
        try {
          JSON.parse(block.text)
          return true
        } catch {
          return false
        }
      })()
      if (whole) continue
      for (const line of block.text.split("\n").filter((l) => l.trim() !== "")) {
        expect(() => JSON.parse(line), `${where(block)}: ${line.slice(0, 80)}`).not.toThrow()
      }
    }
  })

  it("a TypeScript or JavaScript block is a complete example unless marked a fragment", () => {
    for (const block of docs.flatMap((p) => p.blocks).filter((b) => /^(ts|typescript|js|javascript|mjs)$/.test(b.language))) {
      if (block.info.includes("fragment")) continue
      expect(block.text, where(block)).toMatch(/^import /m)
    }
  })

  it("the README is a front page: at most 250 lines", () => {
    expect(page("README.md").source.trimEnd().split("\n").length).toBeLessThanOrEqual(250)
  })
})
