/**
 * The live schema as text a model reads well: one block per collection with its vectorizer,
 * multi-tenancy and index flags, then one line per column with its data type, how it is indexed and
 * the filter operators it accepts. Prompts embed these blocks so the model works from real names.
 *
 * @since 0.1.0
 */
import * as CollectionSchema from "../../Driver/CollectionSchema.ts"
import * as FilterBuilder from "../../Driver/FilterBuilder.ts"

const yesNo = (flag: boolean) => (flag ? "yes" : "no")

/** How a property is indexed, in words. @category rendering */
export const indexing = (property: CollectionSchema.Property): string => {
  const parts: Array<string> = []
  if (property.indexFilterable) parts.push("filterable")
  if (property.indexSearchable) parts.push(`searchable${property.tokenization !== undefined ? ` (tokenization ${property.tokenization})` : ""}`)
  if (property.indexRangeFilters) parts.push("range index")
  return parts.length === 0 ? "not indexed" : parts.join(", ")
}

/** The data type of a property, cross-references spelled out. @category rendering */
export const typeOf = (property: CollectionSchema.Property): string =>
  property.baseType === "reference" ? `cross-reference to ${property.dataType.join(", ")}` : property.dataType.join(", ")

/** One line per column (uuid, properties, vector), with the operators of each. @category rendering */
export const columnLines = (collection: CollectionSchema.Collection): ReadonlyArray<string> =>
  CollectionSchema.columns(collection).map((column) => {
    const operators = FilterBuilder.operatorsFor(collection, column.name)
    const how = column.property !== undefined
      ? `${typeOf(column.property)}; ${indexing(column.property)}`
      : column.kind === "uuid"
      ? "uuid; primary key, read-only"
      : "number[]; the object's vector, read-only"
    const nested = column.property?.nestedProperties !== undefined
      ? `; nested: ${column.property.nestedProperties.map((p) => `${p.name} (${p.dataType.join(",")})`).join(", ")}`
      : ""
    const description = column.property?.description !== undefined ? ` — ${column.property.description}` : ""
    return `- ${column.name}: ${how}${nested}; filter operators: ${operators.length === 0 ? "none" : operators.join(", ")}${description}`
  })

/** A collection's heading and settings. @category rendering */
export const collectionHeader = (collection: CollectionSchema.Collection): ReadonlyArray<string> => {
  const indexes = [
    collection.indexNullState ? "null state" : undefined,
    collection.indexPropertyLength ? "property length" : undefined,
    collection.indexTimestamps ? "timestamps" : undefined
  ].filter((x) => x !== undefined)
  return [
    `### ${collection.name}${collection.description !== undefined ? ` — ${collection.description}` : ""}`,
    `vectorizer: ${collection.vectorizer ?? "none"}${
      collection.namedVectors.length > 0 ? `; named vectors: ${collection.namedVectors.join(", ")}` : ""
    }; multi-tenancy: ${yesNo(collection.multiTenancy)}; optional indexes: ${indexes.length === 0 ? "none" : indexes.join(", ")}`
  ]
}

/** A whole collection block. @category rendering */
export const collectionBlock = (collection: CollectionSchema.Collection): string =>
  [...collectionHeader(collection), "columns:", ...columnLines(collection)].join("\n")

/**
 * Several collections, at most `limit` blocks; the rest are named only, so a huge schema stays a
 * readable prompt.
 *
 * @category rendering
 */
export const schemaBlocks = (collections: ReadonlyArray<CollectionSchema.Collection>, limit = 40): string => {
  if (collections.length === 0) return "(the schema has no collections)"
  const shown = collections.slice(0, limit).map(collectionBlock)
  const rest = collections.slice(limit).map((c) => c.name)
  return rest.length === 0
    ? shown.join("\n\n")
    : `${shown.join("\n\n")}\n\n(${rest.length} more collections, not detailed: ${rest.join(", ")})`
}

/** The GraphQL `where` operator each filter operator of the grid becomes. @category constants */
export const graphqlOperatorHint =
  "In GraphQL `where` filters these operators are written: equals → Equal, not equals → NotEqual, greater than → GreaterThan, " +
  "greater or equal → GreaterThanEqual, less than → LessThan, less or equal → LessThanEqual, contains / starts with / ends with → Like " +
  "(with * wildcards), in list → ContainsAny, is NULL / is not NULL → IsNull (needs the null-state index), " +
  "is empty / is not empty → property length Equal 0 (needs the property-length index)."
