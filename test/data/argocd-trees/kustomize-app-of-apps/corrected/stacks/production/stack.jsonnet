{
  apiVersion: "pulumi.com/v1",
  kind: "Stack",
  metadata: { name: "reports-production" },
  spec: {
    serviceAccountName: "reports",
    stack: "myorg/reports/production",
    projectRepo: "https://github.com/myorg/reports.git",
    commit: "2b0889718d3e63feeb6079ccd5e4488d8601e353",
    refresh: true,
    environment: ["aws-credentials"],
  },
}
