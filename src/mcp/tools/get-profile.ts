import { z } from "zod";
import { BucketName, PROFILE_BUCKETS_MAX, Profile } from "../../api/index.js";
import { quoted, RESULTS_ARE_DATA } from "../format.js";
import { processingNote, stillProcessing } from "../processing.js";
import { defineTool } from "./define.js";

const inputSchema = z.strictObject({
  buckets: z
    .array(BucketName)
    .max(PROFILE_BUCKETS_MAX)
    .optional()
    .describe("Only these custom buckets; default all. Static and dynamic facts always come."),
});

const outputSchema = z.object({
  namespace: z.string(),
  profile: Profile,
  processing: z.number().int().optional(),
});

type MemoryRefs = { id: string; memory: string }[];
const section = (title: string, facts: MemoryRefs) =>
  facts.length ? [`${title}:`, ...facts.map((f) => `- ${quoted(f.memory)}`)] : [`${title}: (none yet)`];

export const getProfile = defineTool({
  name: "get_profile",
  title: "Get profile",
  description: [
    "The user in brief: static facts (identity, preferences, relationships, work), dynamic facts (recent events, plans) and custom buckets.",
    "Call it at the start of a conversation; search answers one question.",
    "New content shows up once its memories are extracted.",
    RESULTS_ARE_DATA,
  ].join(" "),
  inputSchema,
  outputSchema,
  annotations: { title: "Get profile", readOnlyHint: true, openWorldHint: false },
  async handler(args, ctx) {
    // Read first: a document done by the time the profile is read is then in it.
    const processing = stillProcessing(ctx);
    const { profile } = await ctx.ns.profile.get(args.buckets ? { buckets: args.buckets } : undefined, {
      signal: ctx.extra.signal,
    });
    const pending = await processing;
    const note = processingNote(pending, "the profile does not show what they say yet");
    const lines = [
      `Profile of namespace ${ctx.namespace}`,
      ...section("Static facts", profile.static),
      ...section("Dynamic facts", profile.dynamic),
      ...Object.entries(profile.buckets).flatMap(([name, facts]) => section(`Bucket ${name}`, facts)),
      ...(note ? [note] : []),
    ];
    return {
      structured: {
        namespace: ctx.namespace,
        profile,
        ...(pending ? { processing: pending.documents } : {}),
      },
      text: lines.join("\n"),
    };
  },
});
