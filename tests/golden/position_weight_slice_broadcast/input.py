"""keras.io's mlp_image_classification PositionEmbedding: a weight trimmed with ops.slice to the
input's length and broadcast over the batch with ops.broadcast_to."""
import keras
from keras import layers


class PositionEmbedding(layers.Layer):
    def __init__(self, sequence_length):
        super().__init__()
        self.sequence_length = sequence_length

    def build(self, input_shape):
        self.position_embeddings = self.add_weight(
            name="embeddings", shape=[self.sequence_length, input_shape[-1]], initializer="glorot_uniform"
        )

    def call(self, inputs, start_index=0):
        shape = keras.ops.shape(inputs)
        position_embeddings = keras.ops.convert_to_tensor(self.position_embeddings)
        position_embeddings = keras.ops.slice(position_embeddings, (start_index, 0), (shape[-2], shape[-1]))
        return keras.ops.broadcast_to(position_embeddings, shape)


def build_model():
    inputs = keras.Input(shape=(16, 8))
    x = layers.Dense(32)(inputs)
    x = x + PositionEmbedding(sequence_length=20)(x)
    outputs = layers.Dense(4)(layers.GlobalAveragePooling1D()(x))
    return keras.Model(inputs, outputs)
