"""Hand-written PyTorch references for the model-speed benchmark.

Plain idiomatic torch for the same architectures as the corpus Keras models
(channels-first, ``nn.Conv2d``, symmetric ``padding=`` where TF's 'same' pads
asymmetrically, no Keras-compatibility code), written without looking at the
generated modules' code. Each exposes ``build_model()``; its forward returns what
the Keras model returns (probabilities where the model ends in softmax/sigmoid).
Parameter and buffer counts equal the generated modules' (the bench asserts it).
"""
