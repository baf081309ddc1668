/**
 * The REST API (basePath /v1): routing with go-swagger's 404/405, parameter validation, and the
 * handlers of adapters/handlers/rest (objects, batch, schema, tenants, meta, nodes, graphql).
 */
import { authenticate, type AuthSettings, bearerToken } from "./Auth.ts"
import { compileWhere, parseRestWhere, validateWhere, WhereExecutionError, WhereParseError, WhereValidationError } from "./Filters.ts"
import { GraphqlEndpoint } from "./Graphql.ts"
import { BodyError, bodiless, decodeBody, handlerError, type HttpReply, json, swaggerError } from "./Http.ts"
import { isRecord } from "./Json.ts"
import { isUuid, PropertyValueError } from "./PropertyValues.ts"
import { maxResultsMessage, normalizeSort, type QueryLimits, sortObjects, validateSort } from "./Query.ts"
import { type PropertyDef, findProperty, newProperty, isReferenceType, lowerFirst, parseBeacon, SchemaError, upperFirst } from "./Schema.ts"
import { type ClassState, InvalidInputError, type Store, type StoredObject, TenantError } from "./Store.ts"
import { moduleMeta } from "./Vectorizer.ts"

export const WEAVIATE_VERSION = "1.39.0"

export interface RestRequest {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface RestSettings {
  readonly limits: () => QueryLimits
  readonly auth: () => AuthSettings
  readonly hostname: () => string
}

type Params = Record<string, string>
type Handler = (req: RestRequest, params: Params) => HttpReply

interface Route {
  readonly pattern: ReadonlyArray<string>
  readonly methods: Readonly<Record<string, Handler>>
}

const STRICT_UUID = /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$/

class ParamError extends Error {
  constructor(readonly reply: HttpReply) {
    super("param")
  }
}

const intParam = (q: URLSearchParams, name: string): number | undefined => {
  const v = q.get(name)
  if (v === null) return undefined
  if (!/^-?\d+$/.test(v)) throw new ParamError(swaggerError(601, `${name} in query must be of type int64: ${JSON.stringify(v)}`))
  return Number(v)
}

const uuidParam = (params: Params, name = "id"): string => {
  const v = params[name]!
  if (!STRICT_UUID.test(v)) throw new ParamError(swaggerError(601, `${name} in path must be of type uuid: ${JSON.stringify(v)}`))
  return v.toLowerCase()
}

const INCLUDE_KNOWN = new Set(["vector", "classification", "featureProjection"])
const includeVector = (q: URLSearchParams): boolean => {
  const raw = q.get("include")
  if (raw === null || raw === "") return false
  const parts = raw.split(",").map((s) => s.trim())
  for (const p of parts) {
    if (!INCLUDE_KNOWN.has(p)) throw new ParamError(handlerError(400, `unrecognized property '${p}' in ?include list`))
  }
  return parts.includes("vector")
}

const refJson = (ref: unknown): unknown => {
  if (!isRecord(ref)) return ref
  const b = parseBeacon(ref["beacon"])
  if (b === undefined) return ref
  return { beacon: ref["beacon"], href: b.className !== undefined ? `/v1/objects/${b.className}/${b.id}` : `/v1/objects/${b.id}` }
}

export const objectJson = (store: Store, o: StoredObject, withVector: boolean): Record<string, unknown> => {
  const cls = store.getClass(o.class)
  const properties: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o.properties)) {
    const prop = cls === undefined ? undefined : findProperty(cls.def, k)
    properties[k] = prop !== undefined && isReferenceType(prop.dataType) && Array.isArray(v) ? v.map(refJson) : v
  }
  const out: Record<string, unknown> = {
    class: o.class,
    creationTimeUnix: o.creationTimeUnix,
    id: o.id,
    lastUpdateTimeUnix: o.lastUpdateTimeUnix,
    properties
  }
  if (o.tenant !== undefined) out["tenant"] = o.tenant
  if (withVector && o.vector !== undefined) out["vector"] = o.vector
  if (withVector && o.vectors !== undefined) out["vectors"] = o.vectors
  return out
}

export class RestApi {
  private readonly routes: ReadonlyArray<Route>
  readonly graphql: GraphqlEndpoint

  constructor(
    private readonly store: Store,
    private readonly settings: RestSettings
  ) {
    this.graphql = new GraphqlEndpoint(store, settings.limits)
    const h = (fn: Handler): Handler => fn.bind(this)
    this.routes = [
      { pattern: [], methods: { GET: h(this.root) } },
      { pattern: [".well-known", "openid-configuration"], methods: { GET: () => bodiless(404) } },
      { pattern: ["meta"], methods: { GET: h(this.meta) } },
      { pattern: ["schema"], methods: { GET: h(this.schemaDump), POST: h(this.schemaCreate) } },
      { pattern: ["schema", ":className"], methods: { GET: h(this.schemaGet), DELETE: h(this.schemaDelete), PUT: h(this.schemaUpdate) } },
      { pattern: ["schema", ":className", "properties"], methods: { POST: h(this.schemaAddProperty) } },
      { pattern: ["schema", ":className", "shards"], methods: { GET: h(this.shardsGet) } },
      { pattern: ["cluster", "statistics"], methods: { GET: h(this.clusterStatistics) } },
      {
        pattern: ["schema", ":className", "tenants"],
        methods: { GET: h(this.tenantsGet), POST: h(this.tenantsCreate), PUT: h(this.tenantsUpdate), DELETE: h(this.tenantsDelete) }
      },
      { pattern: ["schema", ":className", "tenants", ":tenantName"], methods: { GET: h(this.tenantGet), HEAD: h(this.tenantGet) } },
      { pattern: ["objects"], methods: { GET: h(this.objectsList), POST: h(this.objectsCreate) } },
      { pattern: ["objects", "validate"], methods: { POST: h(this.objectsValidate) } },
      {
        pattern: ["objects", ":id"],
        methods: {
          GET: h(this.deprecatedGet),
          HEAD: h(this.deprecatedHead),
          PUT: h(this.deprecatedPut),
          PATCH: h(this.deprecatedPatch),
          DELETE: h(this.deprecatedDelete)
        }
      },
      {
        pattern: ["objects", ":className", ":id"],
        methods: {
          GET: h(this.objectGet),
          HEAD: h(this.objectHead),
          PUT: h(this.objectPut),
          PATCH: h(this.objectPatch),
          DELETE: h(this.objectDelete)
        }
      },
      {
        pattern: ["objects", ":className", ":id", "references", ":propertyName"],
        methods: { POST: h(this.referenceAdd), PUT: h(this.referenceReplace), DELETE: h(this.referenceDelete) }
      },
      { pattern: ["batch", "objects"], methods: { POST: h(this.batchCreate), DELETE: h(this.batchDelete) } },
      { pattern: ["graphql"], methods: { POST: h(this.graphqlPost) } },
      { pattern: ["nodes"], methods: { GET: h(this.nodes) } },
      { pattern: ["nodes", ":className"], methods: { GET: h(this.nodes) } }
    ]
  }

  private match(segments: ReadonlyArray<string>): { route: Route; params: Params } | undefined {
    // static segments win over parameters (go-swagger/denco)
    const candidates = this.routes
      .filter((r) => r.pattern.length === segments.length && r.pattern.every((p, i) => p.startsWith(":") || p === segments[i]))
      .sort((a, b) => b.pattern.filter((p) => !p.startsWith(":")).length - a.pattern.filter((p) => !p.startsWith(":")).length)
    const route = candidates[0]
    if (route === undefined) return undefined
    const params: Params = {}
    route.pattern.forEach((p, i) => {
      if (p.startsWith(":")) params[p.slice(1)] = decodeURIComponent(segments[i]!)
    })
    return { route, params }
  }

  handle(req: RestRequest): HttpReply {
    if (req.path === "/v1/.well-known/live" || req.path === "/v1/.well-known/ready") return bodiless(200)
    const notFound = swaggerError(404, `path ${req.path} was not found`)
    if (req.path !== "/v1" && !req.path.startsWith("/v1/")) return notFound
    const segments = req.path === "/v1" ? [] : req.path.slice(4).replace(/\/$/, "").split("/")
    const found = this.match(segments)
    if (found === undefined) return notFound
    const handler = found.route.methods[req.method]
    if (handler === undefined) {
      const allowed = Object.keys(found.route.methods).sort()
      return swaggerError(405, `method ${req.method} is not allowed, but [${allowed.join(",")}] are`, { allow: allowed.join(",") })
    }
    const denied = authenticate(this.settings.auth(), req.path, bearerToken(req.headers["authorization"], req.query))
    if (denied !== undefined) return denied
    try {
      return handler(req, found.params)
    } catch (e) {
      if (e instanceof ParamError || e instanceof BodyError) return e.reply
      return handlerError(500, e instanceof Error ? e.message : String(e))
    }
  }

  // -------------------------------------------------------------------------------------------
  // misc

  private root(): HttpReply {
    return json(200, {
      links: [
        { href: "/v1/meta", name: "Meta information about this instance/cluster" },
        { documentationHref: "https://weaviate.io/developers/weaviate/api/rest/schema", href: "/v1/schema", name: "view complete schema" },
        { documentationHref: "https://weaviate.io/developers/weaviate/api/graphql", href: "/v1/graphql", name: "GraphQL API" }
      ]
    })
  }

  private meta(): HttpReply {
    return json(200, { grpcMaxMessageSize: 104858000, hostname: this.settings.hostname(), modules: moduleMeta(), version: WEAVIATE_VERSION })
  }

  private nodes(req: RestRequest, params: Params): HttpReply {
    const verbose = req.query.get("output") === "verbose"
    const classes = this.store.listClasses().filter((c) => params["className"] === undefined || c.name === upperFirst(params["className"]!))
    const shards = classes.flatMap((c) =>
      c.multiTenant
        ? [...c.tenants.keys()].map((t) => ({ c, name: t, count: c.partitions.get(t)?.size ?? 0 }))
        : [{ c, name: c.shardName, count: c.partitions.get("")?.size ?? 0 }]
    )
    const node: Record<string, unknown> = {
      batchStats: { queueLength: 0, ratePerSecond: 0 },
      gitHash: "adcffc5",
      name: "weaviate-0",
      operationalMode: "ReadWrite",
      shards: verbose
        ? shards.map((s) => ({
            asyncReplicationStatus: [],
            class: s.c.name,
            name: s.name,
            objectCount: s.count,
            vectorIndexingStatus: "READY",
            vectorQueueLength: 0,
            compressed: false,
            loaded: true,
            numberOfReplicas: 1,
            replicationFactor: 1
          }))
        : null,
      status: "HEALTHY",
      version: WEAVIATE_VERSION
    }
    if (verbose) node["stats"] = { objectCount: shards.reduce((n, s) => n + s.count, 0), shardCount: shards.length }
    return json(200, { nodes: [node] })
  }

  /** `GET /v1/schema/{className}/shards`: a one-node server's shards, all READY (tenants for a multi-tenant class). */
  private shardsGet(_req: RestRequest, p: Params): HttpReply {
    const c = this.store.listClasses().find((x) => x.name === upperFirst(p["className"]!))
    if (c === undefined) return json(404, { error: [{ message: `class ${JSON.stringify(upperFirst(p["className"]!))} not found` }] })
    const names = c.multiTenant ? [...c.tenants.keys()] : [c.shardName]
    return json(200, names.map((name) => ({ name, status: "READY", vectorQueueSize: 0 })))
  }

  /** `GET /v1/cluster/statistics`: one node, the Raft leader of a configuration of itself. */
  private clusterStatistics(): HttpReply {
    const member = { address: "127.0.0.1:8300", id: "weaviate-0", suffrage: 0 }
    return json(200, {
      statistics: [{
        bootstrapped: true,
        candidates: {},
        dbLoaded: true,
        isVoter: true,
        leaderAddress: member.address,
        leaderId: member.id,
        name: member.id,
        open: true,
        raft: { latestConfiguration: [member], numPeers: "0", state: "Leader" },
        ready: true,
        status: "HEALTHY"
      }],
      synchronized: true
    })
  }

  private graphqlPost(req: RestRequest): HttpReply {
    const body = decodeBody(req.body, "models.GraphQLQuery") as Record<string, unknown>
    const r = this.graphql.handle(body)
    return { status: r.status, headers: { "content-type": "application/json" }, body: r.body }
  }

  // -------------------------------------------------------------------------------------------
  // schema

  private schemaDump(): HttpReply {
    return json(200, { classes: this.store.listClasses().map((c) => c.def) })
  }

  private schemaCreate(req: RestRequest): HttpReply {
    const body = decodeBody(req.body, "models.Class")
    try {
      return json(200, this.store.createClass(body).def)
    } catch (e) {
      // the real server's schema errors carry `allowed: null` before `error`
      if (e instanceof SchemaError) return json(422, { allowed: null, error: [{ message: e.message }] })
      throw e
    }
  }

  private schemaGet(_req: RestRequest, p: Params): HttpReply {
    const cls = this.store.getClass(p["className"]!)
    return cls === undefined ? bodiless(404) : json(200, cls.def)
  }

  private schemaDelete(_req: RestRequest, p: Params): HttpReply {
    this.store.deleteClass(p["className"]!)
    return bodiless(200)
  }

  private schemaUpdate(req: RestRequest, p: Params): HttpReply {
    const body = decodeBody(req.body, "models.Class") as Record<string, unknown>
    const cls = this.store.getClass(p["className"]!)
    if (cls === undefined) return handlerError(404, `class ${JSON.stringify(upperFirst(p["className"]!))} not found`)
    if (typeof body["class"] === "string" && upperFirst(body["class"]) !== cls.name) {
      return handlerError(422, `class name is immutable: attempted change from ${JSON.stringify(cls.name)} to ${JSON.stringify(body["class"])}`)
    }
    if (typeof body["description"] === "string") cls.def.description = body["description"]
    this.store.schemaChanged()
    return json(200, cls.def)
  }

  private schemaAddProperty(req: RestRequest, p: Params): HttpReply {
    const body = decodeBody(req.body, "models.Property")
    const cls = this.store.getClass(p["className"]!)
    if (cls === undefined) return handlerError(422, `class ${JSON.stringify(upperFirst(p["className"]!))} not found`)
    try {
      const probe = newProperty(cls.def, body, (n) => this.store.getClass(n) !== undefined)
      cls.def.properties = [...(cls.def.properties ?? []), probe]
      this.store.schemaChanged()
      return json(200, probe)
    } catch (e) {
      if (e instanceof SchemaError) return handlerError(422, e.message)
      throw e
    }
  }

  private mtClass(p: Params): ClassState | HttpReply {
    const cls = this.store.getClass(p["className"]!)
    if (cls === undefined) return handlerError(422, `class ${JSON.stringify(upperFirst(p["className"]!))} not found`)
    if (!cls.multiTenant) return handlerError(422, `multi-tenancy is not enabled for class ${JSON.stringify(cls.name)}`)
    return cls
  }

  private tenantsGet(_req: RestRequest, p: Params): HttpReply {
    const cls = this.store.getClass(p["className"]!)
    const failed = (reason: string) => handlerError(422, `failed to execute query: could not get tenants: could not get tenants: ${reason}`)
    if (cls === undefined) return failed("class not found")
    if (!cls.multiTenant) return failed(`multi-tenancy is not enabled for class ${JSON.stringify(cls.name)}`)
    return json(200, [...cls.tenants.values()])
  }

  private tenantsCreate(req: RestRequest, p: Params): HttpReply {
    const body = decodeBody(req.body, "[]*models.Tenant", "array") as Array<unknown>
    const cls = this.mtClass(p)
    if (!("def" in cls)) return cls
    const tenants = body.map((t) => {
      const r = isRecord(t) ? t : {}
      const status = typeof r["activityStatus"] === "string" ? r["activityStatus"] : "ACTIVE"
      return { name: String(r["name"] ?? ""), activityStatus: status === "HOT" ? "ACTIVE" : status === "COLD" ? "INACTIVE" : status }
    })
    const bad = tenants.find((t) => !/^[A-Za-z0-9_-]{1,64}$/.test(t.name))
    if (bad !== undefined) return handlerError(422, `tenant name should only contain alphanumeric characters (a-z, A-Z, 0-9), underscore (_), and hyphen (-), with a length between 1 and 64 characters`)
    this.store.addTenants(cls, tenants)
    // the real server answers with the tenants as sent
    return json(200, body)
  }

  private tenantsUpdate(req: RestRequest, p: Params): HttpReply {
    const body = decodeBody(req.body, "[]*models.Tenant", "array") as Array<unknown>
    const cls = this.mtClass(p)
    if (!("def" in cls)) return cls
    const out = []
    for (const t of body) {
      const r = isRecord(t) ? t : {}
      const existing = cls.tenants.get(String(r["name"] ?? ""))
      if (existing === undefined) return handlerError(422, `tenant not found: ${JSON.stringify(String(r["name"] ?? ""))}`)
      if (typeof r["activityStatus"] === "string") existing.activityStatus = r["activityStatus"] === "HOT" ? "ACTIVE" : r["activityStatus"] === "COLD" ? "INACTIVE" : r["activityStatus"]
      out.push(existing)
    }
    return json(200, out)
  }

  private tenantsDelete(req: RestRequest, p: Params): HttpReply {
    const body = decodeBody(req.body, "[]string", "array") as Array<unknown>
    const cls = this.mtClass(p)
    if (!("def" in cls)) return cls
    this.store.deleteTenants(cls, body.map(String))
    return bodiless(200)
  }

  private tenantGet(_req: RestRequest, p: Params): HttpReply {
    const cls = this.mtClass(p)
    if (!("def" in cls)) return cls
    const t = cls.tenants.get(p["tenantName"]!)
    return t === undefined ? bodiless(404) : json(200, t)
  }

  // -------------------------------------------------------------------------------------------
  // objects

  private objectsList(req: RestRequest): HttpReply {
    const q = req.query
    const limitParam = intParam(q, "limit")
    const offset = intParam(q, "offset") ?? 0
    const withVector = includeVector(q)
    const { maxResults, defaultLimit } = this.settings.limits()
    const limit = limitParam ?? defaultLimit
    const className = q.get("class")
    const after = q.get("after")
    if (className === null || className === "") {
      if (after !== null) return handlerError(500, "list objects: after parameter not allowed, cursor must be specific to one class, set class query param")
      if (offset + limit > maxResults) return handlerError(500, `list objects: ${maxResultsMessage(offset, limit, maxResults)}`)
      const all = this.store
        .listClasses()
        .filter((c) => !c.multiTenant)
        .flatMap((c) => c.inUuidOrder(""))
      const page = all.slice(offset, offset + limit).map((o) => objectJson(this.store, o, withVector))
      return json(200, { deprecations: null, objects: page, totalResults: page.length > 0 ? page.length : undefined })
    }
    if (offset + limit > maxResults) {
      return handlerError(422, `msg:offset or limit code:400 err:${maxResultsMessage(offset, limit, maxResults)}`)
    }
    if (offset + limit === 0) return json(200, { deprecations: [], objects: [] })
    const sortParam = q.get("sort")
    const sortKeys =
      sortParam === null || sortParam === ""
        ? []
        : (() => {
            const orders = (q.get("order") ?? "").split(",")
            return sortParam.split(",").map((path, i) => ({ path: [path], order: orders[i] === "desc" ? "desc" : "asc" }))
          })()
    if (after !== null) {
      const reason =
        limitParam === undefined
          ? "limit parameter must be set"
          : offset > 0 || sortKeys.length > 0
            ? "offset,sort cannot be set with after and limit parameters"
            : after !== "" && !isUuid(after)
              ? `after parameter '${after}' is not a valid uuid: invalid UUID length: ${String(after).length}`
              : undefined
      if (reason !== undefined) return handlerError(422, `msg:cursor api: invalid 'after' parameter code:400 err:${reason}`)
    }
    const cls = this.store.getClass(className)
    if (cls === undefined) return bodiless(404)
    const sortError = validateSort(cls.def, normalizeSort(sortKeys))
    if (sortError !== undefined) return handlerError(422, `msg:sorting code:400 err:${sortError}`)
    let key: string
    try {
      key = this.store.partitionKey(cls, q.get("tenant") ?? undefined, false)
    } catch (e) {
      if (e instanceof TenantError) return handlerError(422, `msg:repo.query code:422 err:${e.message}`)
      throw e
    }
    let objects = cls.inUuidOrder(key)
    if (after !== null && after !== "") objects = objects.filter((o) => o.id > after.toLowerCase())
    const sorted = sortObjects(cls.def, objects.map((obj) => ({ obj })), sortKeys).map((x) => x.obj)
    const page = sorted.slice(offset, offset + limit).map((o) => objectJson(this.store, o, withVector))
    return json(200, { deprecations: [], objects: page, totalResults: page.length > 0 ? page.length : undefined })
  }

  private bodyObject(req: RestRequest): Record<string, unknown> {
    const body = decodeBody(req.body, "models.Object") as Record<string, unknown>
    if (body["id"] !== undefined && (typeof body["id"] !== "string" || !STRICT_UUID.test(body["id"]))) {
      throw new ParamError(swaggerError(601, `id in body must be of type uuid: ${JSON.stringify(String(body["id"]))}`))
    }
    return body
  }

  private write(fn: () => StoredObject, prefixValidation: string, tenantMessage = (m: string) => m): HttpReply {
    try {
      return json(200, objectJson(this.store, fn(), true))
    } catch (e) {
      if (e instanceof PropertyValueError) return handlerError(422, `${prefixValidation}${e.message}`)
      if (e instanceof InvalidInputError) {
        return handlerError(422, e.message === "the given class is empty" ? `${prefixValidation}${e.message}` : e.message)
      }
      if (e instanceof TenantError) return handlerError(422, tenantMessage(e.message))
      throw e
    }
  }

  private objectsCreate(req: RestRequest): HttpReply {
    const body = this.bodyObject(req)
    return this.write(
      () =>
        this.store.putObject(
          {
            class: typeof body["class"] === "string" ? body["class"] : "",
            id: typeof body["id"] === "string" ? body["id"] : undefined,
            properties: body["properties"],
            vector: body["vector"],
            vectors: body["vectors"],
            tenant: typeof body["tenant"] === "string" ? body["tenant"] : undefined
          },
          "create"
        ),
      "invalid object: ",
      // where the real server's create path reports a tenant problem
      (m) => m.startsWith("tenant not found")
        ? `put object: import into index ${String(body["class"]).toLowerCase()}: determine shard: ${m}`
        : `determine shard: ${m}`
    )
  }

  private objectsValidate(req: RestRequest): HttpReply {
    const body = this.bodyObject(req)
    const cls = this.store.getClass(typeof body["class"] === "string" ? body["class"] : "")
    if (cls === undefined) return handlerError(422, `invalid object: class ${JSON.stringify(String(body["class"] ?? ""))} not found in schema`)
    return bodiless(200)
  }

  private lookup(p: Params, tenant: string | null): { cls: ClassState; key: string } | HttpReply {
    const cls = this.store.getClass(p["className"]!)
    if (cls === undefined) return bodiless(404)
    try {
      return { cls, key: this.store.partitionKey(cls, tenant ?? undefined, false) }
    } catch (e) {
      if (e instanceof TenantError) return handlerError(422, e.message)
      throw e
    }
  }

  private objectGet(req: RestRequest, p: Params): HttpReply {
    const id = uuidParam(p)
    const withVector = includeVector(req.query)
    const found = this.lookup(p, req.query.get("tenant"))
    if (!("cls" in found)) return found
    const o = this.store.getObject(found.cls, found.key, id)
    return o === undefined ? bodiless(404) : json(200, objectJson(this.store, o, withVector))
  }

  private objectHead(req: RestRequest, p: Params): HttpReply {
    const id = uuidParam(p)
    const found = this.lookup(p, req.query.get("tenant"))
    if (!("cls" in found)) return found
    return bodiless(this.store.getObject(found.cls, found.key, id) === undefined ? 404 : 204)
  }

  private objectPut(req: RestRequest, p: Params): HttpReply {
    const id = uuidParam(p)
    const body = this.bodyObject(req)
    const cls = this.store.getClass(p["className"]!)
    if (cls === undefined) return bodiless(404)
    if (typeof body["id"] === "string" && body["id"].toLowerCase() !== id) return handlerError(422, "invalid update: field 'id' is immutable")
    const tenant = typeof body["tenant"] === "string" ? body["tenant"] : (req.query.get("tenant") ?? undefined)
    try {
      if (this.store.getObject(cls, this.store.partitionKey(cls, tenant, false), id) === undefined) return bodiless(404)
    } catch (e) {
      if (e instanceof TenantError) return handlerError(422, e.message)
      throw e
    }
    return this.write(
      () => this.store.putObject({ class: cls.name, id, properties: body["properties"], vector: body["vector"], vectors: body["vectors"], tenant }, "replace"),
      "invalid object: "
    )
  }

  private objectPatch(req: RestRequest, p: Params, classFromBody = false): HttpReply {
    const id = uuidParam(p)
    if (req.body.trim() === "") return bodiless(400)
    const body = this.bodyObject(req)
    const className = classFromBody ? (typeof body["class"] === "string" ? body["class"] : "") : p["className"]!
    if (className === "") return handlerError(422, "msg:bad request code:400 err:empty class")
    const cls = this.store.getClass(className)
    if (cls === undefined) return bodiless(404)
    const tenant = typeof body["tenant"] === "string" ? body["tenant"] : (req.query.get("tenant") ?? undefined)
    let key: string
    try {
      key = this.store.partitionKey(cls, tenant, false)
    } catch (e) {
      if (e instanceof TenantError) return handlerError(422, `msg:repo.object code:422 err:${e.message}`)
      throw e
    }
    try {
      const merged = this.store.mergeObject(cls, key, id, { class: cls.name, properties: body["properties"], vector: body["vector"], vectors: body["vectors"] })
      return bodiless(merged === undefined ? 404 : 204)
    } catch (e) {
      if (e instanceof PropertyValueError) return handlerError(422, `msg:bad request code:400 err:${e.message}`)
      throw e
    }
  }

  private objectDelete(req: RestRequest, p: Params): HttpReply {
    const id = uuidParam(p)
    const cls = this.store.getClass(p["className"]!)
    if (cls === undefined) {
      return handlerError(500, `could not delete object from vector repo: delete from non-existing index for ${upperFirst(p["className"]!)}`)
    }
    try {
      const key = this.store.partitionKey(cls, req.query.get("tenant") ?? undefined, false)
      this.store.deleteObject(cls, key, id)
      return bodiless(204)
    } catch (e) {
      if (e instanceof TenantError) return handlerError(422, e.message)
      throw e
    }
  }

  // deprecated /v1/objects/{id}: class-less, searching (and deleting in) every class

  private deprecatedGet(req: RestRequest, p: Params): HttpReply {
    const id = uuidParam(p)
    const withVector = includeVector(req.query)
    const o = this.store.findEverywhere(id).find((x) => x.tenant === undefined)
    return o === undefined ? bodiless(404) : json(200, objectJson(this.store, o, withVector))
  }

  private deprecatedHead(_req: RestRequest, p: Params): HttpReply {
    const id = uuidParam(p)
    return bodiless(this.store.findEverywhere(id).some((x) => x.tenant === undefined) ? 204 : 404)
  }

  private deprecatedDelete(_req: RestRequest, p: Params): HttpReply {
    const id = uuidParam(p)
    const found = this.store.findEverywhere(id).filter((x) => x.tenant === undefined)
    if (found.length === 0) return bodiless(404)
    for (const o of found) this.store.deleteObject(this.store.getClass(o.class)!, "", o.id)
    return bodiless(204)
  }

  private deprecatedPatch(req: RestRequest, p: Params): HttpReply {
    return this.objectPatch(req, p, true)
  }

  private deprecatedPut(req: RestRequest, p: Params): HttpReply {
    const id = uuidParam(p)
    const body = this.bodyObject(req)
    const className = typeof body["class"] === "string" ? body["class"] : ""
    if (className === "") return handlerError(422, "invalid object: the given class is empty")
    return this.objectPut(req, { className, id })
  }

  // references

  private refTarget(p: Params, tenant: string | null): { cls: ClassState; key: string; obj: StoredObject; prop: PropertyDef } | HttpReply {
    const id = uuidParam(p)
    const found = this.lookup(p, tenant)
    if (!("cls" in found)) return found
    const obj = this.store.getObject(found.cls, found.key, id)
    if (obj === undefined) return bodiless(404)
    const prop = findProperty(found.cls.def, lowerFirst(p["propertyName"]!))
    if (prop === undefined || !isReferenceType(prop.dataType)) {
      return handlerError(422, `msg:add reference to repo code:422 err:property '${p["propertyName"]}' is not a reference property`)
    }
    return { ...found, obj, prop }
  }

  private setRefs(t: { cls: ClassState; key: string; obj: StoredObject; prop: PropertyDef }, refs: ReadonlyArray<unknown>): HttpReply {
    const r = this.store.mergeObject(t.cls, t.key, t.obj.id, { class: t.cls.name, properties: { [t.prop.name]: refs } })
    return r === undefined ? bodiless(404) : bodiless(200)
  }

  private referenceAdd(req: RestRequest, p: Params): HttpReply {
    const body = decodeBody(req.body, "models.SingleRef")
    const t = this.refTarget(p, req.query.get("tenant"))
    if (!("obj" in t)) return t
    const existing = Array.isArray(t.obj.properties[t.prop.name]) ? (t.obj.properties[t.prop.name] as Array<unknown>) : []
    try {
      return this.setRefs(t, [...existing, body])
    } catch (e) {
      if (e instanceof PropertyValueError) return handlerError(422, e.message)
      throw e
    }
  }

  private referenceReplace(req: RestRequest, p: Params): HttpReply {
    const body = decodeBody(req.body, "models.MultipleRef", "array") as Array<unknown>
    const t = this.refTarget(p, req.query.get("tenant"))
    if (!("obj" in t)) return t
    try {
      return this.setRefs(t, body)
    } catch (e) {
      if (e instanceof PropertyValueError) return handlerError(422, e.message)
      throw e
    }
  }

  private referenceDelete(req: RestRequest, p: Params): HttpReply {
    const body = decodeBody(req.body, "models.SingleRef") as Record<string, unknown>
    const t = this.refTarget(p, req.query.get("tenant"))
    if (!("obj" in t)) return t
    const target = parseBeacon(body["beacon"])
    const existing = Array.isArray(t.obj.properties[t.prop.name]) ? (t.obj.properties[t.prop.name] as Array<unknown>) : []
    const kept = existing.filter((r) => {
      const b = isRecord(r) ? parseBeacon(r["beacon"]) : undefined
      return b === undefined || target === undefined || b.id !== target.id
    })
    this.setRefs(t, kept)
    return bodiless(204)
  }

  // -------------------------------------------------------------------------------------------
  // batch

  private batchCreate(req: RestRequest): HttpReply {
    const body = decodeBody(req.body, "objects.BatchObjectsCreateBody") as Record<string, unknown>
    const objects = Array.isArray(body["objects"]) ? body["objects"] : []
    const results = objects.map((raw) => {
      const o = isRecord(raw) ? raw : {}
      const now = Date.now()
      const fail = (message: string) => ({
        ...o,
        creationTimeUnix: now,
        lastUpdateTimeUnix: now,
        deprecations: null,
        result: { errors: { error: [{ message }] }, status: "FAILED" }
      })
      if (o["id"] !== undefined && (typeof o["id"] !== "string" || !STRICT_UUID.test(o["id"]))) {
        return fail(`id in body must be of type uuid: ${JSON.stringify(String(o["id"]))}`)
      }
      try {
        const stored = this.store.putObject(
          {
            class: typeof o["class"] === "string" ? o["class"] : "",
            id: typeof o["id"] === "string" ? o["id"] : undefined,
            properties: o["properties"],
            vector: o["vector"],
            vectors: o["vectors"],
            tenant: typeof o["tenant"] === "string" ? o["tenant"] : undefined
          },
          "upsert"
        )
        return { ...objectJson(this.store, stored, true), deprecations: null, result: { status: "SUCCESS" } }
      } catch (e) {
        if (e instanceof PropertyValueError || e instanceof InvalidInputError || e instanceof TenantError) return fail(e.message)
        throw e
      }
    })
    return json(200, results)
  }

  private batchDelete(req: RestRequest): HttpReply {
    const body = decodeBody(req.body, "models.BatchDelete") as Record<string, unknown>
    const match = isRecord(body["match"]) ? body["match"] : {}
    const output = body["output"] === "verbose" ? "verbose" : "minimal"
    const dryRun = body["dryRun"] === true
    const className = typeof match["class"] === "string" ? match["class"] : ""
    const cls = this.store.getClass(className)
    if (cls === undefined) return handlerError(422, `validate: class: ${className} doesn't exist`)
    if (match["where"] === undefined || match["where"] === null) return handlerError(422, "validate: failed to parse where filter: where filter is required")
    let predicate
    let key: string
    try {
      const where = parseRestWhere(match["where"])
      validateWhere(where, cls.def, this.store)
      key = this.store.partitionKey(cls, req.query.get("tenant") ?? undefined, false)
      predicate = compileWhere(where, cls, this.store, cls.multiTenant ? key : undefined)
    } catch (e) {
      if (e instanceof WhereParseError) return handlerError(422, `validate: failed to parse where filter: ${e.message}`)
      if (e instanceof WhereValidationError) return handlerError(422, `validate: invalid 'where' filter: ${e.message}`)
      if (e instanceof TenantError) return handlerError(422, e.message)
      if (e instanceof WhereExecutionError) return handlerError(500, `batch delete objects: ${e.message}`)
      throw e
    }
    const { maxResults } = this.settings.limits()
    const matched = [...(cls.partitions.get(key)?.values() ?? [])].filter(predicate).slice(0, maxResults)
    if (!dryRun) for (const o of matched) this.store.deleteObject(cls, key, o.id)
    return json(200, {
      dryRun,
      match: { class: cls.name, where: match["where"] },
      output,
      results: {
        failed: 0,
        limit: maxResults,
        matches: matched.length,
        objects: output === "verbose" ? matched.map((o) => ({ id: o.id, status: dryRun ? "DRYRUN" : "SUCCESS" })) : null,
        successful: dryRun ? 0 : matched.length
      }
    })
  }
}
