export interface TestResourceLike {
    type: string;
    name: string;
    props: unknown;
}
