/**
 * aws-s3-no-public-acl (mandatory)
 *
 * What it checks, why, the fix and what it reads: the `about` of its metadata below (`pko-guard explain`).
 */
import { bucket, ownership } from "./model/examples";
import { RuleFinding, resourceRule } from "./model/policy";
import { Plain, UNKNOWN, get, list } from "./model/values";

export const NAME = "aws-s3-no-public-acl";

const PUBLIC_CANNED = new Set(["public-read", "public-read-write", "authenticated-read"]);
const PUBLIC_GROUPS = /acs\.amazonaws\.com\/groups\/global\/(AllUsers|AuthenticatedUsers)\b/;

const BUCKET_TYPES = new Set(["aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"]);
const ACL_TYPES = new Set(["aws:s3/bucketAcl:BucketAcl", "aws:s3/bucketAclV2:BucketAclV2"]);
const OBJECT_TYPES = new Set([
    "aws:s3/bucketObject:BucketObject",
    "aws:s3/bucketObjectv2:BucketObjectv2",
    "aws:s3/objectCopy:ObjectCopy",
]);

function checkCanned(field: string, acl: Plain, out: RuleFinding[]): void {
    if (acl === UNKNOWN) {
        out.push({
            message: `${field} is unknown during preview, so it cannot be verified not to be public; set a known ACL such as "private".`,
            field,
        });
    } else if (typeof acl === "string" && PUBLIC_CANNED.has(acl)) {
        out.push({
            message: `${field} is the public canned ACL ${JSON.stringify(acl)}; use "private" and grant access through a bucket policy.`,
            field,
        });
    }
}

function checkGrantee(field: string, uri: Plain, out: RuleFinding[]): void {
    if (uri === UNKNOWN) {
        out.push({
            message: `${field} has a grantee URI unknown during preview, so it cannot be verified not to be public; make it known or remove the grant.`,
            field,
        });
    } else if (typeof uri === "string" && PUBLIC_GROUPS.test(uri)) {
        const group = PUBLIC_GROUPS.exec(uri)![1];
        out.push({
            message: `${field} grants access to the ${group} group (public); remove the grant and use a bucket policy for specific principals.`,
            field,
        });
    }
}

function checkGrantList(field: string, grants: Plain, uriPath: string[], out: RuleFinding[]): void {
    if (grants === UNKNOWN) {
        out.push({
            message: `${field} is unknown during preview, so the grants cannot be verified not to be public; make them known at preview time.`,
            field,
        });
        return;
    }
    list(grants).forEach((g, i) => checkGrantee(`${field}[${i}]`, get(g, ...uriPath), out));
}

export const rule = resourceRule(
    {
        name: NAME,
        about: {
            what: "no S3 bucket, bucket ACL or object resource grants public access: no canned ACL\n`public-read`, `public-read-write` or `authenticated-read`, and no grant to the `AllUsers` or\n`AuthenticatedUsers` groups.",
            why: 'Stacks deployed by PKO often create AWS resources; a public ACL exposes the data to the internet\n(AWS: "Blocking public access to your Amazon S3 storage").',
            fix: "use `private` (or no ACL with BucketOwnershipControls `BucketOwnerEnforced`) and grant access\nthrough bucket policies to specific principals.",
            notes: ["Fails closed when the ACL or the grants are unknown during preview."],
            reads: [
                "aws:s3/bucket:Bucket",
                "aws:s3/bucketV2:BucketV2",
                "aws:s3/bucketAcl:BucketAcl",
                "aws:s3/bucketAclV2:BucketAclV2",
                "aws:s3/bucketObject:BucketObject",
                "aws:s3/bucketObjectv2:BucketObjectv2",
                "aws:s3/objectCopy:ObjectCopy",
            ],
            readsProduction: false,
            patternSettings: [],
            example: [bucket, ownership],
        },
        enforcementLevel: "mandatory",
        severity: "critical",
        url: "https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-control-block-public-access.html",
    },
    (resource, _config, ctx) => {
        const type = resource.type;
        if (!BUCKET_TYPES.has(type) && !ACL_TYPES.has(type) && !OBJECT_TYPES.has(type)) {
            return [];
        }
        const props = ctx.views.props(resource);
        const out: RuleFinding[] = [];
        if (props === UNKNOWN) {
            return [`${type} inputs are unknown during preview, so the ACL cannot be verified not to be public.`];
        }
        checkCanned("acl", get(props, "acl"), out);
        if (BUCKET_TYPES.has(type)) {
            checkGrantList("grants", get(props, "grants"), ["uri"], out);
        } else if (ACL_TYPES.has(type)) {
            checkGrantList(
                "accessControlPolicy.grants",
                get(props, "accessControlPolicy", "grants"),
                ["grantee", "uri"],
                out,
            );
        }
        return out;
    },
);
