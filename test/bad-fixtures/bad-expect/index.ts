export const nothing = true;
