import { z } from "zod";
import { Filter } from "./filter.js";
import {
  BUCKET_DESCRIPTION_MAX_LENGTH,
  BUCKET_NAME_MAX_LENGTH,
  BUCKET_NAME_PATTERN,
  BUCKET_PUT_MAX,
  BUCKET_PUT_MIN,
  PROFILE_BUCKETS_MAX,
} from "./limits.js";
import { MemoryRef } from "./memories.js";

export const BucketName = z
  .string()
  .max(BUCKET_NAME_MAX_LENGTH, `bucket names are at most ${BUCKET_NAME_MAX_LENGTH} characters`)
  .regex(BUCKET_NAME_PATTERN, "bucket names match ^[a-z0-9][a-z0-9_-]*$");

const uniqueNames = (max: number) =>
  z
    .array(BucketName)
    .max(max, `takes at most ${max} bucket names`)
    .refine((names) => new Set(names).size === names.length, { message: "bucket names must be unique" });

export const ProfileBody = z.strictObject({
  filter: Filter.optional(),
  buckets: uniqueNames(PROFILE_BUCKETS_MAX).optional(),
});
export type ProfileBody = z.input<typeof ProfileBody>;

export const Profile = z.looseObject({
  static: z.array(MemoryRef),
  dynamic: z.array(MemoryRef),
  buckets: z.record(z.string(), z.array(MemoryRef)),
});
export type Profile = z.infer<typeof Profile>;

export const ProfileResponse = z.looseObject({ profile: Profile });
export type ProfileResponse = z.infer<typeof ProfileResponse>;

export const BucketDescription = z
  .string()
  .max(
    BUCKET_DESCRIPTION_MAX_LENGTH,
    `bucket descriptions are at most ${BUCKET_DESCRIPTION_MAX_LENGTH} characters`,
  );

export const PutBucketsBody = z.strictObject({
  buckets: z
    .record(BucketName, BucketDescription)
    .refine((m) => Object.keys(m).length >= BUCKET_PUT_MIN, {
      message: `buckets needs at least ${BUCKET_PUT_MIN} entry`,
    })
    .refine((m) => Object.keys(m).length <= BUCKET_PUT_MAX, {
      message: `buckets takes at most ${BUCKET_PUT_MAX} entries`,
    }),
});
export type PutBucketsBody = z.input<typeof PutBucketsBody>;

export const DeleteBucketsBody = z.strictObject({
  buckets: uniqueNames(Number.MAX_SAFE_INTEGER).refine((n) => n.length >= 1, {
    message: "buckets needs at least 1 name",
  }),
});
export type DeleteBucketsBody = z.input<typeof DeleteBucketsBody>;

export const BucketsResponse = z.looseObject({ buckets: z.record(z.string(), z.string()) });
export type BucketsResponse = z.infer<typeof BucketsResponse>;
