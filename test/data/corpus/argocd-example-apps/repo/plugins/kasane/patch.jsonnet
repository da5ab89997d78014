function (layers)

[
  layers[0] {
    spec+: {
      replicas: 2,
    },
  }
]
