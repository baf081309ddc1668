/**
 * The text of an AI client's config file, parsed and edited in place: JSON, JSONC (comments and
 * trailing commas, as VS Code and Zed read them) and YAML (Continue). An edit changes the text of one
 * server entry and leaves every other byte as it was where the format allows: JSON(C) through
 * `jsonc-parser`, YAML by splicing the lines of that one list item (its comments, anchors, quoting and
 * indentation stay), checked by parsing the result again.
 *
 * @since 0.1.0
 */
import * as Jsonc from "jsonc-parser"
import { ConfigFileError } from "./ConfigFileError.ts"
import { isDeepStrictEqual } from "node:util"
import type * as YamlLib from "yaml"

/**
 * The `yaml` library, loaded when a YAML file is read or written: only Continue's files are YAML, and
 * the library would add 161 KB to what every start of the CLI parses (the bundle puts it in a chunk).
 * It is CommonJS: Node's import gives its exports by name and as `default`, the bundle only as `default`.
 */
const loadYaml = async () => (await import("yaml")).default
type YamlModule = Awaited<ReturnType<typeof loadYaml>>

/** How a client writes its config file. @category models */
export type Format = "json" | "jsonc" | "yaml"

export { ConfigFileError }

/** A parsed config file. @category models */
export interface Parsed {
  readonly format: Format
  readonly text: string
  /** The file's value; the empty file (or a YAML file of comments only) is the empty object. */
  readonly value: Record<string, unknown>
  readonly yaml: { readonly lib: YamlModule; readonly doc: YamlLib.Document.Parsed } | undefined
}

/** What an edit produced. @category models */
export interface Edited {
  readonly text: string
  /**
   * The YAML could not be spliced (the servers are a flow list such as `[]`, or the item's lines could
   * not be told apart), so the `yaml` library wrote the document again: comments and values stay,
   * the spacing of other lines may not.
   */
  readonly reformatted: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const notObject = (file: string, format: Format) =>
  new ConfigFileError({ message: `${file} does not hold a ${format === "yaml" ? "YAML mapping" : "JSON object"}; not changing it` })

// ===== Reading =====

const parseYaml = (Yaml: YamlModule, text: string, file: string): Parsed => {
  const doc = Yaml.parseDocument(text, { uniqueKeys: true })
  const error = doc.errors[0]
  if (error !== undefined) {
    throw new ConfigFileError({
      message: `${file} is not valid YAML (${error.message.split("\n")[0]!.replace(/:$/, "")}); not changing it — fix it or add the printed snippet by hand`
    })
  }
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: 1000 })
  } catch (cause) {
    throw new ConfigFileError({ message: `${file} cannot be read as YAML (${(cause as Error).message}); not changing it` })
  }
  if (value === null || value === undefined) value = {}
  if (!isRecord(value)) throw notObject(file, "yaml")
  return { format: "yaml", text, value, yaml: { lib: Yaml, doc } }
}

/**
 * Parses a config file's text. `who` names the client in the error for strict JSON. The empty text is
 * the empty object.
 *
 * @category reading
 */
export const parse = async (text: string, format: Format, file: string, who: string): Promise<Parsed> => {
  if (format === "yaml") return parseYaml(await loadYaml(), text, file)
  if (text.trim().length === 0) return { format, text, value: {}, yaml: undefined }
  let value: unknown
  if (format === "jsonc") {
    const errors: Array<Jsonc.ParseError> = []
    value = Jsonc.parse(text, errors, { allowTrailingComma: true, disallowComments: false })
    if (errors.length > 0) {
      const first = errors[0]!
      throw new ConfigFileError({
        message: `${file} is not valid JSONC (${Jsonc.printParseErrorCode(first.error)} at offset ${first.offset}); not changing it — fix it or add the printed snippet by hand`
      })
    }
  } else {
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new ConfigFileError({
        message: `${file} is not plain JSON (${(error as Error).message}), which ${who} requires; not changing it — add the printed snippet by hand`
      })
    }
  }
  if (!isRecord(value)) throw notObject(file, format)
  return { format, text, value, yaml: undefined }
}

/**
 * The servers a file names, by name: a JSON(C) object at `path`, or (YAML) the list at `path[0]`
 * whose items carry a `name` (the first of a name wins, as a lookup would find it). Empty when there
 * are none or the member has another type.
 *
 * @category reading
 */
export const servers = (value: Record<string, unknown>, path: ReadonlyArray<string>, format: Format): Record<string, unknown> => {
  if (format === "yaml") {
    const list = value[path[0]!]
    const named: Record<string, unknown> = {}
    if (!Array.isArray(list)) return named
    for (const item of list) if (isRecord(item) && typeof item["name"] === "string" && !(item["name"] in named)) named[item["name"]] = item
    return named
  }
  let at: unknown = value
  for (const key of path) at = isRecord(at) ? at[key] : undefined
  return isRecord(at) ? at : {}
}

/**
 * Refuses a file whose servers member has the wrong type (`"mcpServers": []` in JSON, a mapping where
 * Continue wants a list): editing it would lose what is there.
 *
 * @category reading
 */
export const checkServers = (parsed: Parsed, path: ReadonlyArray<string>, file: string): void => {
  if (parsed.format === "yaml") {
    const list = parsed.value[path[0]!]
    if (list !== undefined && list !== null && !Array.isArray(list)) {
      throw new ConfigFileError({ message: `${file}: "${path[0]}" is not a list (${typeof list === "object" ? "a mapping" : `the ${typeof list} ${JSON.stringify(list)}`}); not changing it` })
    }
    if (parsed.yaml !== undefined && parsed.yaml.lib.isAlias(parsed.yaml.doc.get(path[0]!, true))) {
      throw new ConfigFileError({ message: `${file}: "${path[0]}" is an alias of a list defined elsewhere in the file; not changing it — add the printed snippet by hand` })
    }
    return
  }
  let at: unknown = parsed.value
  for (const key of path) {
    at = isRecord(at) ? at[key] : undefined
    if (at !== undefined && !isRecord(at)) {
      throw new ConfigFileError({ message: `${file}: "${path.join(".")}" is not an object; not changing it` })
    }
  }
}

// ===== Editing JSON(C) =====

/** How the file is indented and ends its lines, so an edit looks like the rest of it. */
const jsonFormatting = (text: string): Jsonc.FormattingOptions => {
  const indented = /^([ \t]+)\S/m.exec(text)?.[1]
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  if (indented === undefined) return { tabSize: 2, insertSpaces: true, eol }
  return indented.startsWith("\t") ? { tabSize: 1, insertSpaces: false, eol } : { tabSize: indented.length, insertSpaces: true, eol }
}

const editJson = (parsed: Parsed, path: ReadonlyArray<string>, name: string, value: unknown): string => {
  if (parsed.text.trim().length === 0) {
    let fresh: Record<string, unknown> = { [name]: value }
    for (const key of [...path].reverse()) fresh = { [key]: fresh }
    return JSON.stringify(fresh, null, 2) + "\n"
  }
  const options = jsonFormatting(parsed.text)
  return Jsonc.applyEdits(parsed.text, Jsonc.modify(parsed.text, [...path, name], value, { formattingOptions: options }))
}

// ===== Editing YAML =====

interface YamlStyle {
  readonly eol: string
  readonly indent: number
  /** Whether block lists sit indented under their key (`key:\n  - a`), as Continue writes them. */
  readonly indentSeq: boolean
}

const yamlStyle = (text: string): YamlStyle => ({
  eol: text.includes("\r\n") ? "\r\n" : "\n",
  // A mapping nested in a mapping shows the file's indentation step.
  indent: Math.max(1, /^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1( +)[^\s#-]/m.exec(text)?.[2]?.length ?? 2),
  indentSeq: !/^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1- /m.test(text)
})

const nameOf = (Yaml: YamlModule, item: unknown) => (Yaml.isMap(item) ? item.get("name") : undefined)

/** The list item `value` as block text, each line starting at `column`. */
const itemText = (Yaml: YamlModule, value: Record<string, unknown>, column: number, style: YamlStyle) =>
  Yaml.stringify([value], { lineWidth: 0, indent: style.indent, indentSeq: style.indentSeq }).trimEnd().split("\n")
    .map((line) => " ".repeat(column) + line).join(style.eol) + style.eol

/** The lines of one block-list item: from its `-` line to the end of its last line. */
const itemLines = (text: string, node: YamlLib.Node) => {
  const range = node.range
  if (range === undefined || range === null) return undefined
  let dash = range[0] - 1
  while (dash >= 0 && /[ \t\r\n]/.test(text[dash]!)) dash--
  if (text[dash] !== "-") return undefined
  const start = text.lastIndexOf("\n", dash - 1) + 1
  if (!/^ *$/.test(text.slice(start, dash))) return undefined
  return { start, column: dash - start, end: range[1] }
}

/** Splices the item's lines; `undefined` where the list is not a plain block list. */
const spliceYaml = (parsed: Parsed, key: string, name: string, item: Record<string, unknown> | undefined, style: YamlStyle): string | undefined => {
  const { text } = parsed
  const { lib: Yaml, doc } = parsed.yaml!
  const root = doc.contents
  if (root !== null && (!Yaml.isMap(root) || root.flow === true)) return undefined
  const pair = root?.items.find((p) => Yaml.isScalar(p.key) && p.key.value === key)
  if (pair === undefined) {
    if (item === undefined) return text
    const separator = text.length === 0 || text.endsWith("\n") ? "" : style.eol
    return `${text}${separator}${key}:${style.eol}${itemText(Yaml, item, style.indentSeq ? style.indent : 0, style)}`
  }
  const seq = pair.value
  if (!Yaml.isSeq(seq) || seq.flow === true || seq.items.length === 0) return undefined
  const index = seq.items.findIndex((node) => nameOf(Yaml, node) === name)
  const at = index === -1 ? seq.items.length - 1 : index
  const lines = itemLines(text, seq.items[at] as YamlLib.Node)
  if (lines === undefined) return undefined
  const newline = lines.end > 0 && text[lines.end - 1] !== "\n" ? style.eol : ""
  if (index === -1) {
    if (item === undefined) return text
    return text.slice(0, lines.end) + newline + itemText(Yaml, item, lines.column, style) + text.slice(lines.end)
  }
  if (item !== undefined) return text.slice(0, lines.start) + itemText(Yaml, item, lines.column, style) + text.slice(lines.end)
  const rest = text.slice(0, lines.start) + text.slice(lines.end)
  if (seq.items.length > 1) return rest
  // The last item goes: the key keeps an empty list (`key: []`), not a null Continue would refuse.
  const colon = text.indexOf(":", (pair.key as YamlLib.Node).range![1])
  return colon === -1 || colon > lines.start ? undefined : `${rest.slice(0, colon + 1)} []${rest.slice(colon + 1)}`
}

/** Writes the whole document again with the `yaml` library (its comments and values stay). */
const rewriteYaml = (parsed: Parsed, key: string, name: string, item: Record<string, unknown> | undefined, style: YamlStyle): string => {
  const Yaml = parsed.yaml!.lib
  const doc = parsed.yaml!.doc.clone()
  const seq = doc.get(key, true)
  if (Yaml.isSeq(seq)) {
    const index = seq.items.findIndex((node) => nameOf(Yaml, node) === name)
    if (item === undefined) {
      if (index !== -1) seq.items.splice(index, 1)
    } else if (index === -1) seq.items.push(doc.createNode(item))
    else seq.items[index] = doc.createNode(item)
  } else if (item !== undefined) {
    doc.set(key, doc.createNode([item]))
  }
  return doc.toString({ lineWidth: 0, indent: style.indent, indentSeq: style.indentSeq }).replace(/\r?\n/g, style.eol)
}

/** Whether `text` parses to `expected`. */
const holds = (Yaml: YamlModule, text: string, expected: unknown) => {
  const doc = Yaml.parseDocument(text, { uniqueKeys: true })
  if (doc.errors.length > 0) return false
  try {
    return isDeepStrictEqual(doc.toJS({ maxAliasCount: 1000 }) ?? {}, expected)
  } catch {
    return false
  }
}

const editYaml = (parsed: Parsed, key: string, name: string, value: Record<string, unknown> | undefined, file: string): Edited => {
  const item = value === undefined ? undefined : { name, ...value }
  const list = Array.isArray(parsed.value[key]) ? [...(parsed.value[key] as Array<unknown>)] : []
  const index = list.findIndex((entry) => isRecord(entry) && entry["name"] === name)
  if (item === undefined) {
    if (index !== -1) list.splice(index, 1)
  } else if (index === -1) list.push(item)
  else list[index] = item
  const expected = { ...parsed.value, [key]: list }
  const style = yamlStyle(parsed.text)
  const spliced = spliceYaml(parsed, key, name, item, style)
  const Yaml = parsed.yaml!.lib
  if (spliced !== undefined && holds(Yaml, spliced, expected)) return { text: spliced, reformatted: false }
  let rewritten: string | undefined
  try {
    rewritten = rewriteYaml(parsed, key, name, item, style)
  } catch {
    // The library refuses to write a document whose alias lost its anchor.
    rewritten = undefined
  }
  if (rewritten !== undefined && holds(Yaml, rewritten, expected)) return { text: rewritten, reformatted: true }
  throw new ConfigFileError({ message: `${file}: its YAML cannot be changed without changing other values (an anchor or alias in the way?); not changing it — add the printed snippet by hand` })
}

/**
 * Sets (`value`) or removes (`undefined`) the server `name` in the parsed file and returns the new
 * text. The caller has checked the servers member (`checkServers`) and that a removed entry exists.
 *
 * @category editing
 */
export const edit = (parsed: Parsed, path: ReadonlyArray<string>, name: string, value: Record<string, unknown> | undefined, file: string): Edited =>
  parsed.format === "yaml"
    ? editYaml(parsed, path[0]!, name, value, file)
    : { text: editJson(parsed, path, name, value), reformatted: false }

/**
 * The snippet `setup` prints for one entry, in the file's own format.
 *
 * @category editing
 */
export const render = async (format: Format, path: ReadonlyArray<string>, name: string, value: Record<string, unknown>): Promise<string> => {
  if (format === "yaml") return (await loadYaml()).stringify({ [path[0]!]: [{ name, ...value }] }, { lineWidth: 0 }).trimEnd()
  let snippet: Record<string, unknown> = { [name]: value }
  for (const key of [...path].reverse()) snippet = { [key]: snippet }
  return JSON.stringify(snippet, null, 2)
}

/** The text of a new file holding `value`. @category editing */
export const fresh = async (format: Format, value: Record<string, unknown>): Promise<string> =>
  format === "yaml" ? (await loadYaml()).stringify(value, { lineWidth: 0 }) : JSON.stringify(value, null, 2) + "\n"
