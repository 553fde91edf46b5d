import { addMemory } from "./add-memory.js";
import { connectSource } from "./connect-source.js";
import type { ToolDefinition } from "./define.js";
import { forget } from "./forget.js";
import { getProfile } from "./get-profile.js";
import { list } from "./list.js";
import { search } from "./search.js";

/** Every tool, in the order tools/list shows them. */
export const tools: ToolDefinition[] = [addMemory, search, getProfile, forget, list, connectSource];
